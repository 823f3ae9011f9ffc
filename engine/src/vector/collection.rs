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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::RwLock;
use rustc_hash::FxHashSet;

use super::arena::Arena;
use super::distance::{dot, prefetch};
use super::graph::{Graph, HnswParams};
use super::layout::Layout;
use super::slots::Slots;
use super::topk::TopK;
use crate::record::RecordId;

/// A collection shared between writers, searchers and its background graph builder.
pub(crate) type SharedCollection = Arc<RwLock<VectorCollection>>;

/// Vectors of one (namespace, space) pair.
pub(crate) struct VectorCollection {
    slots: Slots,
    graph: Option<Graph>,
    build: BuildState,
    /// Raised when the collection is being let go (its engine closing, its namespace evicted):
    /// a build in progress gives up and no new one starts.
    stop: Arc<AtomicBool>,
}

enum BuildState {
    Idle,
    Running {
        /// Ids changed while the builder worked from its snapshot.
        dirty: FxHashSet<RecordId>,
        handle: Option<JoinHandle<()>>,
    },
}

impl VectorCollection {
    /// An empty collection of `dim`-dimensional unit vectors.
    pub(crate) fn new(dim: usize) -> Self {
        VectorCollection::of(Slots::new(dim))
    }

    fn of(slots: Slots) -> Self {
        VectorCollection {
            slots,
            graph: None,
            build: BuildState::Idle,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A collection of the vectors `data` (`dim` each, unit length) of `ids`, in that order,
    /// as [`VectorCollection::live`] gave them; `None` if the lengths disagree or an id repeats.
    pub(crate) fn from_parts(dim: usize, ids: Vec<RecordId>, data: Arena) -> Option<Self> {
        Slots::from_parts(dim, ids, data).map(VectorCollection::of)
    }

    /// The records and their vectors, in slot order: what a vector file keeps.
    pub(crate) fn live(&self) -> impl Iterator<Item = (RecordId, &[f32])> {
        self.slots.live()
    }

    /// The graph serving searches, if any: what a vector file keeps beside the vectors.
    pub(crate) fn graph(&self) -> Option<&Graph> {
        self.graph.as_ref()
    }

    /// Searches `graph` (read back from a vector file, built over these records) from now on.
    pub(crate) fn restore_graph(&mut self, graph: Graph) {
        self.graph = Some(graph);
    }

    /// Drops a graph read back from a vector file if `params` would not give this collection
    /// one (HNSW turned off, or the threshold raised above its size), so that it is searched
    /// exactly as asked.
    pub(crate) fn fit_graph(&mut self, params: &HnswParams) {
        if self.len() < params.threshold {
            self.graph = None;
        }
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

    /// Estimated heap bytes: the slots and the graph.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.bytes() + self.graph.as_ref().map_or(0, Graph::heap_bytes)
    }

    /// Number of vectors.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The dimension, then the records and their vectors in slot order, for tests to compare.
    #[cfg(test)]
    pub(crate) fn contents(&self) -> (usize, Vec<RecordId>, Vec<f32>) {
        let (ids, data) = self.slots.live_parts();
        (self.dim(), ids.into_owned(), data.into_owned())
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
        self.slots.upsert(id, vector);
        if let Some(graph) = &mut self.graph {
            graph.upsert(id);
        }
        self.mark_dirty(id);
    }

    /// Removes the vector of `id`; returns whether it was present.
    pub(crate) fn remove(&mut self, id: RecordId) -> bool {
        if !self.slots.remove(id) {
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
    /// similarity. Uses the graph (with a beam of `ef`) when one is ready, exact search otherwise.
    pub(crate) fn search(&self, query: &[f32], k: usize, ef: usize) -> Vec<(RecordId, f32)> {
        if k == 0 || self.len() == 0 {
            return Vec::new();
        }
        let Some(graph) = &self.graph else {
            return self.exact_search(query, k);
        };
        // The graph's candidates are scored exactly, their vectors loaded ahead.
        let candidates: Vec<(RecordId, &[f32])> = graph
            .candidates(query, k, ef)
            .into_iter()
            .filter_map(|id| Some((id, self.slots.get(&id)?)))
            .collect();
        for (_, vector) in &candidates {
            prefetch(vector);
        }
        let mut top = TopK::new(k);
        for (id, vector) in candidates {
            top.offer(id, dot(query, vector));
        }
        for id in graph.fresh() {
            if let Some(vector) = self.slots.get(id) {
                top.offer(*id, dot(query, vector));
            }
        }
        top.into_sorted()
    }

    /// Exact top-`k` by scanning every vector.
    pub(crate) fn exact_search(&self, query: &[f32], k: usize) -> Vec<(RecordId, f32)> {
        self.slots.exact_search(query, k)
    }

    /// What a background build should do now, if anything.
    fn plan(&self, params: &HnswParams) -> Option<Plan> {
        if !matches!(self.build, BuildState::Idle)
            || self.len() < params.threshold
            || self.stop.load(Ordering::SeqCst)
        {
            return None;
        }
        let Some(graph) = &self.graph else {
            return Some(Plan::Build);
        };
        let points = graph.points() as f32;
        if graph.dead() as f32 > params.rebuild_dead_fraction * points {
            Some(Plan::Build)
        } else if graph.fresh_count() as f32 > params.grow_fresh_fraction * points {
            // A frozen graph (read from a vector file) cannot grow: it is rebuilt.
            Some(match graph.index() {
                Some(_) => Plan::Grow,
                None => Plan::Build,
            })
        } else {
            None
        }
    }

    /// Installs what a background build made, catching up on changes made since its
    /// snapshot (they become fresh records or tombstones, which [`Self::plan`] weighs).
    /// Installs nothing if the result no longer continues the current graph.
    fn install(&mut self, built: Built) {
        // A background build finished; the graph is being swapped in.
        fail::fail_point!("engine::vector::install");
        let BuildState::Running { dirty, .. } =
            std::mem::replace(&mut self.build, BuildState::Idle)
        else {
            return;
        };
        let mut graph = match built {
            Built::Whole(graph) => graph,
            Built::Grown { ids, layout } => match self.graph.take() {
                Some(mut graph) => {
                    if !graph.adopt(&ids, layout) {
                        self.graph = Some(graph);
                        return;
                    }
                    graph
                }
                None => return,
            },
        };
        for id in dirty {
            if self.slots.get(&id).is_some() {
                graph.upsert(id);
            } else {
                graph.remove(id);
            }
        }
        self.graph = Some(graph);
    }
}

/// The work of a background build.
enum Plan {
    /// A new graph of every vector.
    Build,
    /// The fresh records inserted into the current graph.
    Grow,
}

/// What a background build hands back to the collection (`None` from a build that stopped).
enum Built {
    Whole(Graph),
    Grown { ids: Vec<RecordId>, layout: Layout },
}

/// Starts a background graph build or growth if the collection has grown past the threshold,
/// or its graph has too many fresh records or tombstones. Searches stay exact for what the
/// graph lacks, and correct, until the result is installed.
pub(crate) fn schedule_graph_build(collection: &SharedCollection, params: HnswParams) {
    type Job = Box<dyn FnOnce() -> Option<Built> + Send>;
    let job: Job = {
        let mut c = collection.write();
        let Some(plan) = c.plan(&params) else {
            return;
        };
        c.build = BuildState::Running {
            dirty: FxHashSet::default(),
            handle: None,
        };
        let (dim, stop) = (c.dim(), Arc::clone(&c.stop));
        let growing = c.graph.as_ref().and_then(|g| Some((g, g.index()?)));
        match (plan, growing) {
            (Plan::Grow, Some((graph, index))) => {
                let mut ids: Vec<RecordId> = graph
                    .fresh()
                    .filter(|id| c.slots.get(id).is_some())
                    .copied()
                    .collect();
                ids.sort_unstable();
                let data: Vec<f32> = ids
                    .iter()
                    .filter_map(|id| c.slots.get(id))
                    .flatten()
                    .copied()
                    .collect();
                let first = graph.points();
                Box::new(move || {
                    let layout = Layout::grow(&index, first, &data, dim, &stop)?;
                    Some(Built::Grown { layout, ids })
                })
            }
            _ => {
                // The build thread takes the arena under a read lock (the same pages when
                // they are mapped from a vector file, else a copy): copying it here, under
                // the write lock, held up the search that scheduled the build (100 ms of a
                // reopened 100k namespace's first answer). Changes made before the copy are
                // in it and also marked dirty, which install handles as any change.
                let source = Arc::clone(collection);
                Box::new(move || {
                    let snapshot = source.read().slots.snapshot();
                    let (ids, data) = snapshot.live_parts();
                    Graph::build(&ids, &data, dim, &params, &stop).map(Built::Whole)
                })
            }
        }
    };
    let shared = Arc::clone(collection);
    let spawned = std::thread::Builder::new()
        .name("mb-hnsw-build".into())
        .spawn(move || {
            match job() {
                Some(built) => shared.write().install(built),
                None => shared.write().build = BuildState::Idle,
            }
            // Whatever changed meanwhile may call for the next build already.
            schedule_graph_build(&shared, params);
        });
    let mut c = collection.write();
    match spawned {
        Ok(handle) => {
            if let BuildState::Running { handle: slot, .. } = &mut c.build {
                *slot = Some(handle);
            }
        }
        Err(e) => {
            tracing::warn!("cannot start HNSW build thread, staying exact: {e}");
            c.build = BuildState::Idle;
        }
    }
}

/// Lets the collection go: a build in progress stops at its next chunk and none starts again.
/// Returns at once; [`wait_for_graph_build`] then returns within a chunk's time.
pub(crate) fn stop_graph_builds(collection: &SharedCollection) {
    collection.read().stop.store(true, Ordering::SeqCst);
}

/// Blocks until no background build is running (a build may schedule a follow-up build).
pub(crate) fn wait_for_graph_build(collection: &SharedCollection) {
    loop {
        let handle = match &mut collection.write().build {
            BuildState::Idle => return,
            BuildState::Running { handle, .. } => handle.take(),
        };
        match handle {
            Some(handle) => {
                if handle.join().is_err() {
                    tracing::error!("HNSW build thread panicked; the collection stays exact");
                    collection.write().build = BuildState::Idle;
                }
            }
            // The builder is being spawned, or another waiter holds its handle.
            None => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
}

#[cfg(test)]
#[path = "collection_tests.rs"]
mod tests;
