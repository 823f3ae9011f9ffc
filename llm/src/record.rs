//! Recording LLM answers in the engine and replaying them.
//!
//! A benchmark run makes thousands of identical calls when it is repeated or resumed. With the
//! record cache on, each answer is stored in the engine under a hash of everything that
//! determines it (provider, model, messages, sampling, output constraint); a rerun in `Replay`
//! mode is then free, deterministic and needs no server, and a `Record` run resumed after a
//! crash pays only for the calls it had not made yet.

use std::sync::Arc;

use async_trait::async_trait;
use mb_engine::{Engine, NamespaceOptions};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{LlmError, Result};
use crate::{ChatProvider, ChatRequest, Completion};

/// The engine namespace that holds recorded answers.
pub const RECORD_NAMESPACE: &str = "mb-llm-record";

/// What the record cache does (`--llm-cache record|replay|off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// Answer from the cache when possible, otherwise call the model and store its answer.
    Record,
    /// Answer only from the cache; a request never recorded is an error.
    Replay,
    /// Always call the model; store nothing.
    Off,
}

/// A provider behind the record cache.
pub struct RecordedProvider<P> {
    inner: P,
    mode: CacheMode,
    engine: Arc<Engine>,
}

impl<P: ChatProvider> RecordedProvider<P> {
    /// Wraps `inner`, recording into (or replaying from) `engine`.
    pub fn new(inner: P, mode: CacheMode, engine: Arc<Engine>) -> Result<RecordedProvider<P>> {
        if mode != CacheMode::Off {
            engine
                .ensure_namespace(RECORD_NAMESPACE, NamespaceOptions::default())
                .map_err(cache_error)?;
        }
        Ok(RecordedProvider {
            inner,
            mode,
            engine,
        })
    }

    /// The cache key of a request: sha-256 over provider, model and the request's content.
    /// The operation label is not part of it: the same prompt gets the same answer whoever asks.
    pub fn key(&self, request: &ChatRequest) -> String {
        let identity = serde_json::json!({
            "provider": self.inner.name(),
            "model": self.inner.model(),
            "messages": request.messages,
            "sampling": request.sampling,
            "response_format": request.response_format,
        });
        let digest = Sha256::digest(identity.to_string().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[async_trait]
impl<P: ChatProvider> ChatProvider for RecordedProvider<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Completion> {
        if self.mode == CacheMode::Off {
            return self.inner.complete(request).await;
        }
        let key = self.key(request);
        let recorded: Option<Completion> = self
            .engine
            .get_state(RECORD_NAMESPACE, &key)
            .map_err(cache_error)?;
        if let Some(mut completion) = recorded {
            completion.replayed = true;
            completion.retries = 0;
            return Ok(completion);
        }
        if self.mode == CacheMode::Replay {
            return Err(LlmError::ReplayMiss {
                operation: request.operation.clone(),
                model: self.inner.model().to_string(),
                key,
            });
        }
        let completion = self.inner.complete(request).await?;
        self.engine
            .put_state(RECORD_NAMESPACE, &key, &completion)
            .map_err(cache_error)?;
        Ok(completion)
    }
}

fn cache_error(error: mb_engine::Error) -> LlmError {
    LlmError::Cache(error.to_string())
}
