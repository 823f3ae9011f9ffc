//! The vectors of one namespace in one embedding space.
//!
//! Vectors live in one contiguous arena that exact search scans; it is the whole index while
//! the collection is small. From [`HnswParams::threshold`] vectors on, an HNSW graph is built
//! from a snapshot of the arena in a background thread and used for search once ready; until
//! then, and whenever the graph is absent, search stays exact. Removals and updates leave
//! tombstones in the graph that searches skip, and records added or changed since they were
//! inserted are searched exactly beside it. A background job inserts those fresh records into
//! the graph once they exceed [`HnswParams::grow_fresh_fraction`] of it (each record is
//! inserted once), and rebuilds the graph from the arena once tombstones exceed
//! [`HnswParams::rebuild_dead_fraction`].
//!
//! A collection read back from a vector file has its graph but not the vectors of the graph's
//! live points ([`super::pending`]): the graph's candidates among them are scored from the
//! store, and the first background job loads their vectors into the arena, then checks the
//! graph's codes ([`super::codes_check`]) and drops the graph if they fail.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::arena::Arena;
use super::codes_check::CodesCheck;
use super::distance::{dot, prefetch, rank};
use super::graph::Graph;
use super::params::HnswParams;
use super::pending::{self, Pending};
use super::slots::Slots;
use super::source::VectorSource;
use super::topk::TopK;
use crate::error::Result;
use crate::record::RecordId;

mod jobs;

use jobs::BuildState;
pub(crate) use jobs::{schedule_graph_build, stop_graph_builds, wait_for_graph_build};

/// A collection shared between writers, searchers and its background graph builder.
pub(crate) type SharedCollection = Arc<RwLock<VectorCollection>>;

/// Vectors of one (namespace, space) pair.
pub(crate) struct VectorCollection {
    slots: Slots,
    /// Records whose vectors are only in the store yet (live points of a graph read back
    /// from a vector file), until a background load brings them in.
    pending: Option<Pending>,
    graph: Option<Graph>,
    /// The check of the graph's codes, still to be made, when the graph was read back from a
    /// vector file (the job that loads the pending records makes it).
    codes: Option<Arc<CodesCheck>>,
    build: BuildState,
    /// Raised when the collection is being let go (its engine closing, its namespace evicted):
    /// a build in progress gives up and no new one starts.
    stop: Arc<AtomicBool>,
    /// Raised when a background job installs a graph built or grown since the collection was
    /// read from its vector file or written to it: a vector file still on disk then lacks it,
    /// and is written again at close, so that the next open does not build it again.
    graph_unsaved: AtomicBool,
}

impl VectorCollection {
    /// An empty collection of `dim`-dimensional unit vectors.
    pub(crate) fn new(dim: usize) -> Self {
        VectorCollection::of(Slots::new(dim))
    }

    fn of(slots: Slots) -> Self {
        VectorCollection {
            slots,
            pending: None,
            graph: None,
            codes: None,
            build: BuildState::Idle,
            stop: Arc::new(AtomicBool::new(false)),
            graph_unsaved: AtomicBool::new(false),
        }
    }

    /// A collection of the vectors `data` (`dim` each, unit length) of `ids`, in that order,
    /// as [`VectorCollection::kept`] gave them; `None` if the lengths disagree or an id repeats.
    pub(crate) fn from_parts(dim: usize, ids: Vec<RecordId>, data: Arena) -> Option<Self> {
        Slots::from_parts(dim, ids, data).map(VectorCollection::of)
    }

    /// The records whose vectors a vector file keeps, with their vectors, in slot order:
    /// every record without a graph, else those that are no live point of it (the graph's
    /// points are read from the store, see [`super::source`]).
    pub(crate) fn kept(&self) -> impl Iterator<Item = (RecordId, &[f32])> {
        let graph = self.graph.as_ref();
        self.slots
            .live()
            .filter(move |(id, _)| graph.is_none_or(|g| !g.is_live(id)))
    }

    /// The graph serving searches, if any: what a vector file keeps beside the vectors.
    pub(crate) fn graph(&self) -> Option<&Graph> {
        self.graph.as_ref()
    }

    /// Whether the graph was built or grown since the collection was read from its vector file
    /// or last written to one.
    pub(crate) fn graph_unsaved(&self) -> bool {
        self.graph_unsaved.load(Ordering::SeqCst)
    }

    /// Notes that a vector file now holds this collection's graph.
    pub(crate) fn graph_saved(&self) {
        self.graph_unsaved.store(false, Ordering::SeqCst);
    }

    /// Searches `graph` (read back from a vector file beside these records, which are its
    /// fresh ones) from now on; the vectors of its live points are read from `source`, and
    /// its codes checked by `codes` once they are loaded. (A graph without live points has
    /// nothing to load, and no codes that could steer a search to an answer.)
    pub(crate) fn restore_graph(
        &mut self,
        graph: Graph,
        source: Arc<dyn VectorSource>,
        codes: Option<Arc<CodesCheck>>,
    ) {
        let live = graph.live_points();
        self.pending = (live.len() > 0).then(|| Pending::new(live.clone(), source));
        self.codes = codes.filter(|_| self.pending.is_some());
        self.graph = Some(graph);
    }

    /// Drops a graph read back from a vector file if `params` would not give this collection
    /// one (HNSW turned off, or the threshold raised above its size), so that it is searched
    /// exactly as asked: the vectors of its points are first read from the store, at once.
    pub(crate) fn fit_graph(&mut self, params: &HnswParams) -> Result<()> {
        if self.len() >= params.threshold {
            return Ok(());
        }
        if let Some(source) = self.pending.as_ref().map(Pending::source) {
            let dim = self.dim();
            pending::load(&*source, dim, &AtomicBool::new(false), |ids, data| {
                self.fill(ids, data)
            })?;
            self.finish_load();
        }
        self.graph = None;
        self.codes = None;
        Ok(())
    }

    /// An empty collection of `dim`-dimensional unit vectors with room for `n` of them.
    pub(crate) fn with_capacity(dim: usize, n: usize) -> Self {
        let mut c = VectorCollection::new(dim);
        c.slots.reserve(n);
        c
    }

    /// The length of every vector of the collection.
    pub(crate) fn dim(&self) -> usize {
        self.slots.dim()
    }

    /// Estimated heap bytes: the slots, the pending records and the graph.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.bytes()
            + self.pending.as_ref().map_or(0, Pending::bytes)
            + self.graph.as_ref().map_or(0, Graph::heap_bytes)
    }

    /// Number of vectors.
    pub(crate) fn len(&self) -> usize {
        self.slots.len() + self.pending.as_ref().map_or(0, Pending::len)
    }

    /// The dimension, then the records and their vectors in slot order, for tests to compare.
    #[cfg(test)]
    pub(crate) fn contents(&self) -> (usize, Vec<RecordId>, Vec<f32>) {
        let (ids, data) = self.slots.live_parts();
        (self.dim(), ids.into_owned(), data.into_owned())
    }

    /// The records in memory and their vectors, by id, for tests to compare collections whose
    /// slots are in another order.
    #[cfg(test)]
    pub(crate) fn by_id(&self) -> Vec<(RecordId, Vec<f32>)> {
        let mut pairs: Vec<(RecordId, Vec<f32>)> =
            self.slots.live().map(|(id, v)| (id, v.to_vec())).collect();
        pairs.sort_by_key(|(id, _)| *id);
        pairs
    }

    /// Whether some vectors are read in place from a vector file.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        self.slots.is_mapped()
    }

    /// Whether an HNSW graph is currently serving searches.
    #[cfg(test)]
    pub(crate) fn has_graph(&self) -> bool {
        self.graph.is_some()
    }

    /// Inserts or replaces the vector of `id` (already normalized, of the right dimension).
    pub(crate) fn upsert(&mut self, id: RecordId, vector: &[f32]) {
        if let Some(pending) = &mut self.pending {
            pending.remove(&id);
        }
        self.slots.upsert(id, vector);
        if let Some(graph) = &mut self.graph {
            graph.upsert(id);
        }
        self.mark_dirty(id);
    }

    /// Removes the vector of `id`; returns whether it was present.
    pub(crate) fn remove(&mut self, id: RecordId) -> bool {
        let was_pending = self.pending.as_mut().is_some_and(|p| p.remove(&id));
        if !was_pending && !self.slots.remove(id) {
            return false;
        }
        if let Some(graph) = &mut self.graph {
            graph.remove(id);
        }
        self.mark_dirty(id);
        true
    }

    fn mark_dirty(&mut self, id: RecordId) {
        if let BuildState::Running { dirty, .. } = &mut self.build {
            dirty.insert(id);
        }
    }

    /// The `k` most similar vectors to the unit vector `query`, best first, with cosine
    /// similarity. Uses the graph (with a beam of `ef`) when one is ready, exact search
    /// otherwise. Fails only when pending records' vectors cannot be read from the store.
    pub(crate) fn search(
        &self,
        query: &[f32],
        k: usize,
        ef: usize,
    ) -> Result<Vec<(RecordId, f32)>> {
        if k == 0 || self.len() == 0 {
            return Ok(Vec::new());
        }
        let Some(graph) = &self.graph else {
            return Ok(self.exact_search(query, k));
        };
        // The graph's candidates are scored exactly.
        let mut top = TopK::new(k);
        self.similarities(query, &graph.candidates(query, k, ef), |id, score| {
            top.offer(id, score)
        })?;
        for id in graph.fresh() {
            if let Some(vector) = self.slots.get(id) {
                top.offer(*id, dot(query, vector));
            }
        }
        Ok(top.into_sorted())
    }

    /// The exact similarity of `query` to the vector of each of `ids` that has one here,
    /// best first: vectors in memory are read there, pending ones from the store.
    pub(crate) fn score(&self, query: &[f32], ids: &[RecordId]) -> Result<Vec<(RecordId, f32)>> {
        let mut scored = Vec::with_capacity(ids.len());
        self.similarities(query, ids, |id, score| scored.push((id, score)))?;
        scored.sort_by(rank);
        Ok(scored)
    }

    /// Hands `found` the exact similarity of `query` to the vector of each of `ids` that has
    /// one here: those in memory first, loaded ahead all at once, then the pending ones, read
    /// from the store in one batch.
    fn similarities(
        &self,
        query: &[f32],
        ids: &[RecordId],
        mut found: impl FnMut(RecordId, f32),
    ) -> Result<()> {
        let mut in_store = Vec::new();
        let in_memory: Vec<(RecordId, &[f32])> = ids
            .iter()
            .filter_map(|id| match self.slots.get(id) {
                Some(vector) => Some((*id, vector)),
                None => {
                    if self.pending.as_ref().is_some_and(|p| p.contains(id)) {
                        in_store.push(*id);
                    }
                    None
                }
            })
            .collect();
        for (_, vector) in &in_memory {
            prefetch(vector);
        }
        for (id, vector) in in_memory {
            found(id, dot(query, vector));
        }
        if let (Some(pending), false) = (&self.pending, in_store.is_empty()) {
            for (id, vector) in pending.fetch(in_store, self.dim())? {
                found(id, dot(query, &vector));
            }
        }
        Ok(())
    }

    /// Exact top-`k` by scanning every vector in memory (all of them unless some are
    /// pending, which only a collection with a graph has).
    pub(crate) fn exact_search(&self, query: &[f32], k: usize) -> Vec<(RecordId, f32)> {
        self.slots.exact_search(query, k)
    }
}

#[cfg(test)]
mod tests;
