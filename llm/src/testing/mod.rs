//! Test doubles and inputs (feature `testing`): a model that replies from a script and keeps
//! every request, so a test can check both what a system asked and what it made of the
//! answers; and seeded hostile text for fuzz tests.

use std::collections::VecDeque;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;

use crate::error::{LlmError, Result};
use crate::{ChatProvider, ChatRequest, Completion};

mod hostile;

pub use hostile::{fuzz_cases, HostileText, FUZZ_CASES_VAR};

/// Replies with its script, one reply per call in order, and records each request.
pub struct ScriptedProvider {
    replies: Mutex<VecDeque<String>>,
    /// The reply once the script is used up; `None` fails the call instead.
    after_script: Option<String>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedProvider {
    /// A provider replying `replies` in order, then failing every call.
    pub fn new(replies: &[&str]) -> Arc<ScriptedProvider> {
        Arc::new(ScriptedProvider::build(replies, None))
    }

    /// A provider replying `replies` in order, then `after_script` to every call.
    pub fn then_always(replies: &[&str], after_script: &str) -> Arc<ScriptedProvider> {
        Arc::new(ScriptedProvider::build(
            replies,
            Some(after_script.to_string()),
        ))
    }

    fn build(replies: &[&str], after_script: Option<String>) -> ScriptedProvider {
        ScriptedProvider {
            replies: Mutex::new(replies.iter().map(|r| r.to_string()).collect()),
            after_script,
            requests: Mutex::default(),
        }
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().clone()
    }

    /// The operation of every request so far, in order.
    pub fn operations(&self) -> Vec<String> {
        self.requests
            .lock()
            .iter()
            .map(|r| r.operation.clone())
            .collect()
    }

    /// The prompt of every request so far (its messages' text, one per line), in order.
    pub fn prompts(&self) -> Vec<String> {
        self.requests
            .lock()
            .iter()
            .map(|r| {
                r.messages
                    .iter()
                    .map(|m| m.content.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect()
    }
}

#[async_trait]
impl ChatProvider for ScriptedProvider {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "scripted-1"
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Completion> {
        self.requests.lock().push(request.clone());
        let reply = self.replies.lock().pop_front();
        let Some(text) = reply.or_else(|| self.after_script.clone()) else {
            return Err(LlmError::Rejected {
                url: "scripted://".into(),
                status: 400,
                detail: "script exhausted".into(),
            });
        };
        Ok(Completion {
            text,
            usage: None,
            finish_reason: None,
            retries: 0,
            replayed: false,
        })
    }
}
