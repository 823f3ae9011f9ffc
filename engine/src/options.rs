//! Engine configuration.

use std::time::Duration;

use crate::lexical::Idf;
use crate::vector::HnswParams;

/// Options for [`crate::Engine::open`]. `EngineOptions::default()` suits most uses.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EngineOptions {
    /// Create the directory if it does not exist (default `true`).
    pub create_if_missing: bool,
    /// `fsync` the write-ahead log on every write (default `false`). Without it an
    /// acknowledged write survives a process crash (`kill -9`) but not a power cut; with it,
    /// both, at the cost of one disk flush per write. [`crate::Engine::flush`] syncs on demand.
    pub sync_writes: bool,
    /// Largest accepted record text, in bytes (default 8 MiB).
    pub max_text_bytes: usize,
    /// How often uncommitted lexical-index changes are committed in the background
    /// (default 1 s). Searches see every acknowledged write regardless.
    pub lexical_commit_interval: Duration,
    /// Commit the lexical index inline once this many documents are uncommitted
    /// (default 50 000), bounding the memory of the uncommitted overlay.
    pub lexical_commit_docs: usize,
    /// Memory budget of the tantivy index writer, in bytes (default 64 MiB).
    pub lexical_writer_memory: usize,
    /// Idf formula of BM25 (default [`Idf::Whoosh`], as MemoryBench's Whoosh baselines).
    pub bm25_idf: Idf,
    /// Vector index parameters.
    pub hnsw: HnswParams,
    /// Most bytes (estimated) of derived search state (BM25 statistics, vector arenas, HNSW
    /// graphs) kept in memory across namespaces; the least recently searched namespaces' state
    /// is dropped beyond it and rebuilt from the store when next searched. It also bounds the
    /// BM25 statistics snapshots the open decodes ahead (those of the namespaces the last
    /// sessions kept in memory) to this many bytes. `None` (the default): everything searched
    /// stays resident, and every statistics snapshot is decoded ahead.
    pub derived_memory_budget: Option<usize>,
    /// Write each searched namespace's vectors to one file at close (`vectors/` in the engine
    /// directory), read at the next open while no write has happened since (default `true`).
    /// A reopened 100k-vector namespace then answers its first search about twice as fast,
    /// at the price of a second copy of the vectors on disk (the store's own stays the
    /// source of truth). `false` deletes the files at open.
    pub vector_snapshots: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            create_if_missing: true,
            sync_writes: false,
            max_text_bytes: 8 << 20,
            lexical_commit_interval: Duration::from_secs(1),
            lexical_commit_docs: 50_000,
            lexical_writer_memory: 64 << 20,
            bm25_idf: Idf::default(),
            hnsw: HnswParams::default(),
            derived_memory_budget: None,
            vector_snapshots: true,
        }
    }
}
