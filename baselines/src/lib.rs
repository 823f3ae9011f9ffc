//! `mb-baselines`: MemoryBench's memory systems as native structures on [`mb_engine`].
//!
//! Every system implements [`MemorySystem`]: memorize training dialogs and conversation
//! corpora, retrieve for a question, assemble upstream's prompt and answer through the LLM
//! layer. State lives in an engine namespace, so a memory built once is reused by later runs.
//! [`registry`] lists the systems, each a [`SystemSpec`]: upstream's names, settings file and
//! the system's own settings type ([`OwnSettings`], beside the keys every system reads in
//! [`SystemSettings`]), dialog column, needs and skipped runs. A system that asks a model has
//! its operations (prompts, reply parsers, offline answers) in its own `ops` module.
//!
//! Systems so far: Vanilla ([`vanilla`], with upstream's long-context fallback on corpus
//! datasets), BM25-M and BM25-S ([`lexical`]), Emb-M and Emb-S ([`dense`]), A-Mem ([`amem`]),
//! Mem0 ([`mem0`]) and MemoryOS ([`memoryos`]); beyond upstream, the hybrid memory
//! ([`hybrid`]).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod amem;
pub mod cluster;
pub mod curation;
pub mod dense;
mod embedding;
mod error;
pub mod history;
pub mod hybrid;
pub mod lexical;
pub mod mem0;
pub mod memoryos;
pub mod metadata;
pub mod prompt;
pub mod python;
pub mod raptor;
pub mod registry;
mod settings;
mod spec;
mod store;
mod system;
pub mod tokens;
pub mod units;
pub mod vanilla;

pub use error::MemoryError;
pub use mb_engine as engine;
pub use registry::REGISTRY;
pub use settings::{check_retrieve_k, Overrides, OwnSettings, SystemSettings, MAX_RETRIEVE_K};
pub use spec::{Builder, SettingsFile, SystemSpec};
pub use system::{
    last_user_text, AnswerTiming, Answered, CorpusMemory, CorpusUnit, MemoryContext, MemoryStats,
    MemorySystem, Retrieved, TrainingDialog,
};
