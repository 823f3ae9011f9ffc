//! The background jobs of a vector collection: loading the vectors of pending records from the
//! store (and checking the codes of the graph they came with), building its HNSW graph,
//! growing it with fresh records.
//!
//! One job runs at a time per collection, on a thread of its own, working from what it took
//! under a short lock; writes go on meanwhile and are caught up with when the job's result is
//! installed. A job that finishes schedules the next one if the collection calls for it, and
//! raising the collection's stop flag ends a job at its next chunk.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use rustc_hash::FxHashSet;

use super::{SharedCollection, VectorCollection};
use crate::heap_release::release_freed_heap;
use crate::record::RecordId;
use crate::vector::graph::Graph;
use crate::vector::insert;
use crate::vector::layout::Layout;
use crate::vector::params::HnswParams;
use crate::vector::pending::{self, Pending};

/// Whether a job is running, and what changed since it took its snapshot.
pub(super) enum BuildState {
    Idle,
    Running {
        /// Ids changed while the builder worked from its snapshot.
        dirty: FxHashSet<RecordId>,
        handle: Option<JoinHandle<()>>,
    },
}

impl VectorCollection {
    /// Moves the vectors of the pending records among `ids` (their vectors one after the
    /// other in `data`) into memory.
    pub(super) fn fill(&mut self, ids: &[RecordId], data: &[f32]) {
        let Some(pending) = &mut self.pending else {
            return;
        };
        let dim = self.slots.dim();
        for (id, vector) in ids.iter().zip(data.chunks_exact(dim)) {
            if pending.remove(id) {
                self.slots.upsert(*id, vector);
            }
        }
    }

    /// Makes room in memory for the pending records' vectors, before a load.
    pub(super) fn reserve_pending(&mut self) {
        let n = self.pending.as_ref().map_or(0, Pending::len);
        self.slots.reserve(n);
    }

    /// Ends a load that went through the whole store: a record still pending has no vector
    /// there (which a file matching the store rules out), so it leaves the graph.
    pub(super) fn finish_load(&mut self) {
        let Some(mut pending) = self.pending.take() else {
            return;
        };
        let missing = pending.drain();
        if !missing.is_empty() {
            tracing::warn!(
                "{} records of a vector file's graph have no vector in the store; searched without them",
                missing.len()
            );
        }
        if let Some(graph) = &mut self.graph {
            for id in missing {
                graph.remove(id);
            }
        }
    }

    /// What a background build should do now, if anything.
    fn plan(&self, params: &HnswParams) -> Option<Plan> {
        if !matches!(self.build, BuildState::Idle) || self.stop.load(Ordering::SeqCst) {
            return None;
        }
        if let Some(pending) = &self.pending {
            // Every vector must be in memory before the graph can be rebuilt or grown.
            return pending.wants_load().then_some(Plan::Load);
        }
        if self.len() < params.threshold {
            return None;
        }
        let Some(graph) = &self.graph else {
            return Some(Plan::Build);
        };
        let points = graph.points() as f32;
        if graph.dead() as f32 > params.rebuild_dead_fraction * points {
            Some(Plan::Build)
        } else if graph.fresh_count() as f32 > params.grow_fresh_fraction * points {
            Some(Plan::Grow)
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
            Built::Loaded { codes_sound } => {
                self.finish_load();
                self.codes = None;
                if !codes_sound {
                    // Searched exactly until the next job builds a graph again, which the
                    // next close writes in place of the damaged file.
                    self.graph = None;
                    self.graph_unsaved.store(true, Ordering::SeqCst);
                }
                return;
            }
            Built::LoadFailed => {
                if let Some(pending) = &mut self.pending {
                    pending.load_failed();
                }
                return;
            }
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
        self.graph_unsaved.store(true, Ordering::SeqCst);
        // Searches go through the graph now: the exact scans' codes (a quarter of the
        // floats, 52 MB at 100k MiniLM vectors) would only be kept up to date for nothing.
        self.slots.forget_scan_codes();
    }
}

/// The work of a background build.
enum Plan {
    /// The pending records' vectors read from the store into memory.
    Load,
    /// A new graph of every vector.
    Build,
    /// The fresh records inserted into the current graph.
    Grow,
}

/// What a background build hands back to the collection (`None` from a build that stopped).
enum Built {
    /// The pending records loaded, and whether the graph's codes passed their check.
    Loaded {
        codes_sound: bool,
    },
    LoadFailed,
    Whole(Graph),
    Grown {
        ids: Vec<RecordId>,
        layout: Layout,
    },
}

/// Starts a background graph build or growth if the collection has grown past the threshold,
/// or its graph has too many fresh records or tombstones. Searches stay exact for what the
/// graph lacks, and correct, until the result is installed.
pub(crate) fn schedule_graph_build(collection: &SharedCollection, params: HnswParams) {
    type Job = Box<dyn FnOnce() -> Option<Built> + Send>;
    // Whether the job frees enough to hand back (`crate::heap_release`): a whole build or a
    // load does; a growth frees a copy of the fresh vectors and of the graph's links, which
    // the next growth reuses, so it does not take the allocator's locks for that.
    let (job, releases_heap): (Job, bool) = {
        let mut c = collection.write();
        let Some(plan) = c.plan(&params) else {
            return;
        };
        c.build = BuildState::Running {
            dirty: FxHashSet::default(),
            handle: None,
        };
        let (dim, stop) = (c.dim(), Arc::clone(&c.stop));
        let releases_heap = !matches!(plan, Plan::Grow);
        let job: Job = match (plan, c.graph.as_ref()) {
            (Plan::Load, _) => {
                let source = c.pending.as_ref().map(Pending::source);
                let codes = c.codes.clone();
                let shared = Arc::clone(collection);
                Box::new(move || {
                    let source = source?;
                    shared.write().reserve_pending();
                    let loaded = pending::load(&*source, dim, &stop, |ids, data| {
                        shared.write().fill(ids, data)
                    });
                    match loaded {
                        Ok(true) => Some(Built::Loaded {
                            codes_sound: codes.is_none_or(|codes| codes.passes()),
                        }),
                        Ok(false) => None,
                        Err(e) => {
                            tracing::error!(
                                "cannot load vectors from the store ({e}); searches read them there"
                            );
                            Some(Built::LoadFailed)
                        }
                    }
                })
            }
            (Plan::Grow, Some(graph)) => {
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
                let layout = graph.shared_layout();
                Box::new(move || {
                    let layout = insert::extend(&layout, &data, dim, &params, &stop)?;
                    Some(Built::Grown { layout, ids })
                })
            }
            _ => {
                // The build thread takes its snapshot of the arena itself: the same pages
                // when they are mapped from a vector file, else the floats frozen in place
                // (a copy made here, under the write lock, held up the search that scheduled
                // the build: 100 ms of a reopened 100k namespace's first answer). Changes
                // made before the snapshot are in it and also marked dirty, which install
                // handles as any change; the arena is thawed once the build is over.
                let source = Arc::clone(collection);
                Box::new(move || {
                    let snapshot = source.write().slots.snapshot();
                    let (ids, data) = snapshot.live_parts();
                    Graph::build(&ids, &data, dim, &params, &stop).map(Built::Whole)
                })
            }
        };
        (job, releases_heap)
    };
    let shared = Arc::clone(collection);
    let spawned = std::thread::Builder::new()
        .name("mb-hnsw-build".into())
        .spawn(move || {
            let built = job();
            {
                let mut c = shared.write();
                match built {
                    Some(built) => c.install(built),
                    None => c.build = BuildState::Idle,
                }
                // The job's snapshot is gone: vectors it froze are changed in place again.
                c.slots.thaw();
            }
            if releases_heap {
                release_freed_heap();
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
