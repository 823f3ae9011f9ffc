//! `mb-baselines`: MemoryBench's memory systems as native structures on [`mb_engine`].
//!
//! Every system implements [`MemorySystem`]: memorize training dialogs and conversation
//! corpora, retrieve for a question, assemble upstream's prompt and answer through the LLM
//! layer. State lives in an engine namespace, so a memory built once is reused by later runs.
//! [`registry`] lists the systems, each a [`SystemSpec`]: upstream's names, settings file,
//! dialog column, needs and skipped runs.
//!
//! Systems so far: Vanilla ([`vanilla`], with upstream's long-context fallback on corpus
//! datasets), BM25-M and BM25-S ([`lexical`]), Emb-M and Emb-S ([`dense`]), A-Mem ([`amem`]),
//! Mem0 ([`mem0`]) and MemoryOS ([`memoryos`]).

#![deny(missing_docs)]

pub mod amem;
pub mod dense;
mod embedding;
mod error;
pub mod lexical;
pub mod mem0;
pub mod memoryos;
pub mod prompt;
pub mod registry;
mod spec;
mod store;
mod system;
pub mod units;
pub mod vanilla;

pub use error::MemoryError;
pub use mb_engine as engine;
pub use registry::REGISTRY;
pub use spec::{Builder, SettingsFile, SystemSpec};
pub use system::{
    check_retrieve_k, last_user_text, AnswerTiming, Answered, CorpusMemory, CorpusUnit,
    MemoryContext, MemoryStats, MemorySystem, Retrieved, SystemSettings, TrainingDialog,
    MAX_RETRIEVE_K,
};
