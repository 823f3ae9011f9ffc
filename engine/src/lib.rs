//! `mb-engine`: an embedded memory store for LLM agents.
//!
//! Memories are [`Record`]s kept in named namespaces (one per user, run or dataset). RocksDB is
//! the source of truth; a tantivy BM25 index and per-namespace vector indexes (exact search,
//! HNSW from a size threshold on) are derived from it and caught up after a crash. Every
//! namespace is scored as if it were alone in the engine.
//!
//! ```
//! use mb_engine::{Engine, EngineOptions, NamespaceOptions, NewRecord, Space};
//!
//! # fn main() -> mb_engine::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! let engine = Engine::open(dir.path().join("memory"), EngineOptions::default())?;
//! engine.create_namespace("alice", NamespaceOptions::default())?;
//! engine.create_space(Space::new("toy-embedder", 3))?;
//!
//! engine.put("alice", NewRecord::new("Alice adopted a cat named Miso")
//!     .with_attribute("speaker", "Alice")
//!     .with_vector("toy-embedder", vec![0.9, 0.1, 0.0]))?;
//! engine.put("alice", NewRecord::new("Alice is training for a marathon")
//!     .with_vector("toy-embedder", vec![0.0, 0.2, 0.9]))?;
//!
//! let hits = engine.search_text("alice", "what is the name of her cat?", 5)?;
//! assert_eq!(hits[0].record.text, "Alice adopted a cat named Miso");
//!
//! let hits = engine.search_vector("alice", "toy-embedder", &[0.0, 0.1, 1.0], 1)?;
//! assert!(hits[0].record.text.contains("marathon"));
//! engine.close()?;
//! # Ok(())
//! # }
//! ```

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod attributes;
mod batch;
mod codec;
mod committer;
mod copy;
mod deferred_stats;
mod directory;
mod directory_lock;
mod disk;
mod engine;
mod error;
mod filter;
mod forget;
mod heap_release;
mod hits;
mod keys;
pub mod lexical;
mod namespace;
mod namespace_drop;
mod opening;
mod options;
mod record;
mod recovery;
mod residency;
mod scan;
mod search;
mod sequencer;
mod side_thread;
mod snapshot;
mod space;
mod state;
mod store;
mod stored_vectors;
mod syntax;
mod transfer;
pub mod vector;
mod warmup;
mod write;

pub use batch::{Batch, WriteReceipt};
pub use directory::ENGINE_FORMAT;
pub use disk::RESUME_HEADROOM;
pub use engine::Engine;
pub use error::{Error, Result};
pub use filter::Filter;
pub use hits::{Hit, HybridQuery};
pub use namespace::{Analyzer, NamespaceInfo, NamespaceOptions, MAX_NAMESPACE_NAME};
pub use options::EngineOptions;
pub use record::{NewRecord, Record, RecordId};
pub use residency::ResidentState;
pub use space::{Space, MAX_DIM, MAX_SPACE_NAME};
pub use syntax::{QuerySyntax, WHOOSH_TEXT_FIELD};
pub use transfer::{ExportEntry, TransferCounts};
pub use vector::HnswParams;
