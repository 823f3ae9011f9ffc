//! Recording LLM answers and replaying them.
//!
//! A benchmark run makes thousands of identical calls when it is repeated or resumed. With the
//! record cache on, each answer is stored in an [`AnswerStore`] under a hash of everything that
//! determines it (provider, model, messages, sampling, output constraint); a rerun in `Replay`
//! mode is then free, deterministic and needs no server, and a `Record` run resumed after a
//! crash pays only for the calls it had not made yet. The store is a seam: with the `engine`
//! feature, [`EngineAnswers`] keeps answers crash-safe in `mb-engine`; without it the clients
//! build without a storage engine.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{LlmError, Result};
use crate::{ChatProvider, ChatRequest, Completion};

#[cfg(feature = "engine")]
mod engine;

#[cfg(feature = "engine")]
pub use engine::{EngineAnswers, RECORD_NAMESPACE};

/// Where recorded answers live: completions by request key, kept across processes.
pub trait AnswerStore: Send + Sync {
    /// The answer recorded under `key`, if any.
    fn load(&self, key: &str) -> Result<Option<Completion>>;

    /// Records `completion` under `key`; once this returns, a later `load` finds it.
    fn save(&self, key: &str, completion: &Completion) -> Result<()>;
}

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
    store: Arc<dyn AnswerStore>,
}

impl<P: ChatProvider> RecordedProvider<P> {
    /// Wraps `inner`, recording into (or replaying from) `store`.
    pub fn new(inner: P, mode: CacheMode, store: Arc<dyn AnswerStore>) -> RecordedProvider<P> {
        RecordedProvider { inner, mode, store }
    }

    /// The cache key of a request: sha-256 over provider, model and the request's content.
    /// The operation label is not part of it: the same prompt gets the same answer whoever asks.
    pub fn key(&self, request: &ChatRequest) -> String {
        let mut identity = serde_json::json!({
            "provider": self.inner.name(),
            "model": self.inner.model(),
            "messages": request.messages,
            "sampling": request.sampling,
            "response_format": request.response_format,
        });
        // Only resends carry the count, so first sends keep the keys recorded before it existed.
        if request.resend > 0 {
            identity["resend"] = request.resend.into();
        }
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
        let recorded = self.store.load(&key)?;
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
        self.store.save(&key, &completion)?;
        Ok(completion)
    }
}
