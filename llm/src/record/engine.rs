//! Recorded answers kept in `mb-engine`: crash-safe, shared with the rest of a run's store.

use std::sync::Arc;

use mb_engine::{Engine, NamespaceOptions};

use super::AnswerStore;
use crate::error::{LlmError, Result};
use crate::Completion;

/// The engine namespace that holds recorded answers.
pub const RECORD_NAMESPACE: &str = "mb-llm-record";

/// An [`AnswerStore`] in an engine's state, under [`RECORD_NAMESPACE`].
pub struct EngineAnswers {
    engine: Arc<Engine>,
}

impl EngineAnswers {
    /// Answers stored in `engine` (creating the namespace if needed).
    pub fn open(engine: Arc<Engine>) -> Result<EngineAnswers> {
        engine
            .ensure_namespace(RECORD_NAMESPACE, NamespaceOptions::default())
            .map_err(cache_error)?;
        Ok(EngineAnswers { engine })
    }
}

impl AnswerStore for EngineAnswers {
    fn load(&self, key: &str) -> Result<Option<Completion>> {
        self.engine
            .get_state(RECORD_NAMESPACE, key)
            .map_err(cache_error)
    }

    fn save(&self, key: &str, completion: &Completion) -> Result<()> {
        self.engine
            .put_state(RECORD_NAMESPACE, key, completion)
            .map_err(cache_error)
    }
}

fn cache_error(error: mb_engine::Error) -> LlmError {
    LlmError::Cache(error.to_string())
}
