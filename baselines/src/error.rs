//! Errors of memory systems.

use mb_datasets::dataset::CorpusFormat;

/// Why a memory operation failed. Stored memory is never left half-written: every write is one
/// engine batch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// The storage engine failed.
    #[error(transparent)]
    Engine(#[from] mb_engine::Error),
    /// The embedder failed.
    #[error(transparent)]
    Embed(#[from] mb_embed::EmbedError),
    /// The LLM layer failed (unreachable server, context overflow, replay miss, …).
    #[error(transparent)]
    Llm(#[from] mb_llm::LlmError),
    /// A dialog the system cannot memorize (e.g. BM25-S needs a user message); the caller
    /// skips it and counts it.
    #[error("dialog of row {test_idx}: {reason}")]
    BadDialog {
        /// The row.
        test_idx: u64,
        /// What is wrong.
        reason: String,
    },
    /// The system does not take this kind of corpus.
    #[error("{system} cannot memorize a {format:?} corpus")]
    UnsupportedCorpus {
        /// The memory system.
        system: &'static str,
        /// The corpus kind.
        format: CorpusFormat,
    },
    /// An argument from the caller is wrong (metadata, a filter, an id); the message names it.
    #[error("{0}")]
    BadInput(String),
    /// A setting or a system name is wrong.
    #[error("{0}")]
    Config(String),
}
