//! The parameters of a collection's HNSW graph: when it has one, how it is built, searched,
//! grown and rebuilt (`super::graph` uses them, `super::insert` builds with them).

/// When and how the approximate (HNSW) index is used.
///
/// The defaults come from `cargo bench --bench engine_ops` (docs/benchmarks.md): the graph
/// search overtakes the exact scan at a few thousand vectors, so collections get a graph from
/// 5,000 vectors on; ef 96 gives recall@10
/// 0.945 over 100k MiniLM records of real conversation (docs/engine.md, docs/history.md).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct HnswParams {
    /// A collection with at least this many vectors gets an HNSW graph; smaller ones are
    /// searched exactly. `usize::MAX` disables HNSW.
    pub threshold: usize,
    /// Maximum links per node (HNSW `M`).
    pub max_connections: usize,
    /// Candidate list size while inserting.
    pub ef_construction: usize,
    /// Candidate list size while searching (at least `k` is used).
    pub ef_search: usize,
    /// Rebuild the graph from scratch once its tombstones (points of records removed or
    /// changed since they were inserted) reach this fraction of its points.
    pub rebuild_dead_fraction: f32,
    /// Insert the fresh records (added or changed since the graph last grew, and searched
    /// exactly until then) into the graph once they exceed this fraction of its points.
    /// Smaller values keep exact scans short at the price of copying the graph more often.
    pub grow_fresh_fraction: f32,
}

impl Default for HnswParams {
    fn default() -> Self {
        HnswParams {
            threshold: 5_000,
            max_connections: 16,
            ef_construction: 128,
            ef_search: 96,
            rebuild_dead_fraction: 0.25,
            grow_fresh_fraction: 0.05,
        }
    }
}
