//! The HNSW graph of a large collection: built by `hnsw_rs`, searched from flat arrays.
//!
//! `hnsw_rs` builds good graphs in parallel, but its search pays for generality on every visited
//! point (reference-counted points, a lock per neighbour list, hashed visited sets). Once built,
//! the graph is therefore copied into flat arrays (layer-0 links in compressed rows, the sparse
//! upper layers in maps, the vectors contiguous in point order) and searched by a plain
//! best-first beam with a bitset of visited points. The beam compares int8 codes of the
//! vectors (a quarter of the bytes, see [`Codes`]), loaded ahead a whole neighbour list at a
//! time; its best candidates are then scored exactly.
//!
//! A flat copy is immutable. Records removed or changed after it was made become tombstones
//! that searches skip; changed and new records are *fresh*: the collection searches them exactly
//! beside the graph. The `hnsw_rs` structure is kept, so fresh records are later inserted into
//! it in a batch and the flat copy is made again ([`Graph::grow`]): each record is inserted once,
//! whatever the collection's size, instead of the whole graph being rebuilt every time fresh
//! records reach a fraction of it. Only tombstones, which an HNSW graph cannot drop, call for a
//! rebuild.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use hnsw_rs::prelude::Hnsw;
use rustc_hash::{FxHashMap, FxHashSet};

use super::codes::Codes;
use super::distance::{dot, prefetch, rank, UnitDotDistance};
use crate::record::RecordId;

/// Points inserted into the HNSW index between two looks at the stop flag (about 0.4 s of a
/// 384-d build on 2 cores).
const BUILD_CHUNK: usize = 1024;

/// When and how the approximate (HNSW) index is used.
///
/// The defaults come from `cargo bench --bench engine_ops` on a 2-core machine (see the
/// docs/benchmarks.md): exact search scans memory at 55–90 ns per 384-d vector, and the graph
/// search overtakes it at a few thousand vectors (10k: 186 µs against 922 µs, recall 0.997, on
/// the AVX2 machine), so collections get a graph from 5,000 vectors on; ef 96 keeps recall@10 at
/// 0.97 at 100k.
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

/// Candidates the beam hands to exact scoring, per result asked for.
const RESCORED_PER_RESULT: usize = 4;

/// The `hnsw_rs` index behind a graph, kept so that fresh records can be inserted into it.
pub(crate) type Index = Hnsw<'static, f32, UnitDotDistance>;

/// The searchable copy of an index: links and vectors in flat arrays, in point order.
pub(crate) struct Layout {
    /// The vectors, in point order.
    vectors: Vec<f32>,
    /// Their int8 codes, which the beam search compares.
    codes: Codes,
    /// Layer-0 links of point `p`: `links[offsets[p]..offsets[p + 1]]`.
    offsets: Vec<u32>,
    links: Vec<u32>,
    /// Links on layers 1, 2, … of the points that reach them.
    upper: Vec<FxHashMap<u32, Vec<u32>>>,
    entry: u32,
}

impl Layout {
    /// Inserts `data` (unit vectors of `dim`, the points `first..`) into `index` and copies the
    /// whole index out. Runs off the collection's lock: `index` is only ever written by the
    /// one build in progress, and searches never read it. Inserts [`BUILD_CHUNK`] points at a
    /// time and gives up (`None`) once `stop` is raised, so a closing engine waits for one
    /// chunk, not for the whole build.
    pub(crate) fn grow(
        index: &Index,
        first: usize,
        data: &[f32],
        dim: usize,
        stop: &AtomicBool,
    ) -> Option<Layout> {
        let points: Vec<(&[f32], usize)> = data.chunks_exact(dim).zip(first..).collect();
        for chunk in points.chunks(BUILD_CHUNK) {
            if stop.load(AtomicOrdering::SeqCst) {
                return None;
            }
            index.parallel_insert_slice(&chunk.to_vec());
        }
        Some(Layout::copy(index, first + points.len(), dim))
    }

    /// Copies the `n` points of `index` (ids `0..n`) into flat arrays.
    fn copy(index: &Index, n: usize, dim: usize) -> Layout {
        let indexation = index.get_point_indexation();
        let top = usize::from(indexation.get_max_level_observed());
        let mut vectors = vec![0.0; n * dim];
        let mut base: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut upper: Vec<FxHashMap<u32, Vec<u32>>> = vec![FxHashMap::default(); top];
        for point in indexation {
            let origin = point.get_origin_id();
            if origin >= n {
                continue;
            }
            vectors[origin * dim..(origin + 1) * dim].copy_from_slice(point.get_v());
            let level = usize::from(point.get_point_id().0);
            for (layer, neighbours) in point.get_neighborhood_id().into_iter().enumerate() {
                if layer > level {
                    break;
                }
                let linked: Vec<u32> = neighbours.iter().map(|nb| nb.d_id as u32).collect();
                match layer {
                    0 => base[origin] = linked,
                    _ => {
                        upper[layer - 1].insert(origin as u32, linked);
                    }
                }
            }
        }
        let entry = indexation
            .get_layer_iterator(top)
            .next()
            .map_or(0, |p| p.get_origin_id() as u32);
        let mut offsets = Vec::with_capacity(n + 1);
        let mut links = Vec::with_capacity(base.iter().map(Vec::len).sum());
        offsets.push(0);
        for linked in base {
            links.extend(linked);
            offsets.push(links.len() as u32);
        }
        Layout {
            codes: Codes::encode(&vectors, dim),
            vectors,
            offsets,
            links,
            upper,
            entry,
        }
    }

    fn heap_bytes(&self) -> usize {
        let upper: usize = self
            .upper
            .iter()
            .flat_map(|layer| layer.values())
            .map(|links| 32 + links.capacity() * 4)
            .sum();
        self.vectors.capacity() * 4
            + self.codes.heap_bytes()
            + self.offsets.capacity() * 4
            + self.links.capacity() * 4
            + upper
    }
}

/// An HNSW graph over the records of a collection, with tombstones and fresh records.
pub(crate) struct Graph {
    dim: usize,
    index: Arc<Index>,
    layout: Layout,
    /// Record of each point.
    point_rid: Vec<RecordId>,
    /// The point of each record still current in the graph.
    live: FxHashMap<RecordId, u32>,
    dead: usize,
    /// Records added or changed since they were last inserted, searched exactly by the collection.
    fresh: FxHashSet<RecordId>,
}

impl Graph {
    /// Estimated heap bytes: the flat copy, the bookkeeping maps and the `hnsw_rs` index
    /// (its own copy of each vector, its link lists and per-point overhead).
    pub(crate) fn heap_bytes(&self) -> usize {
        let points = self.point_rid.len();
        let index = points * (self.dim * 4 + 96) + self.layout.links.len() * 24;
        self.layout.heap_bytes()
            + index
            + self.point_rid.capacity() * 8
            + self.live.capacity() * 24
            + self.fresh.capacity() * 16
    }

    /// Builds the graph of `ids` and their `dim`-dimensional unit vectors (`data`); `None`
    /// when `stop` was raised meanwhile.
    pub(crate) fn build(
        ids: &[RecordId],
        data: &[f32],
        dim: usize,
        params: &HnswParams,
        stop: &AtomicBool,
    ) -> Option<Graph> {
        let index = Arc::new(Hnsw::new(
            params.max_connections,
            ids.len().max(1024),
            16,
            params.ef_construction,
            UnitDotDistance,
        ));
        let layout = Layout::grow(&index, 0, data, dim, stop)?;
        Some(Graph {
            dim,
            index,
            layout,
            point_rid: ids.to_vec(),
            live: ids
                .iter()
                .enumerate()
                .map(|(p, id)| (*id, p as u32))
                .collect(),
            dead: 0,
            fresh: FxHashSet::default(),
        })
    }

    /// The index, for a background [`Layout::grow`].
    pub(crate) fn index(&self) -> Arc<Index> {
        Arc::clone(&self.index)
    }

    /// Adopts a layout grown from this graph's index with `ids` as the points after the
    /// current ones: they stop being fresh and become live points. Returns `false`, changing
    /// nothing, when the layout does not continue this graph.
    pub(crate) fn adopt(&mut self, ids: &[RecordId], layout: Layout) -> bool {
        let first = self.point_rid.len();
        if layout.offsets.len() != first + ids.len() + 1 {
            return false;
        }
        for (p, id) in (first..).zip(ids) {
            self.fresh.remove(id);
            self.live.insert(*id, p as u32);
        }
        self.point_rid.extend_from_slice(ids);
        self.layout = layout;
        true
    }

    /// Number of points in the graph, tombstones included.
    pub(crate) fn points(&self) -> usize {
        self.point_rid.len()
    }

    /// Points of records removed or changed since their insertion.
    pub(crate) fn dead(&self) -> usize {
        self.dead
    }

    /// Number of fresh records.
    pub(crate) fn fresh_count(&self) -> usize {
        self.fresh.len()
    }

    /// Records added or changed since their insertion.
    pub(crate) fn fresh(&self) -> impl Iterator<Item = &RecordId> {
        self.fresh.iter()
    }

    /// `id` got a new vector (or is new): its graph point, if any, becomes a tombstone.
    pub(crate) fn upsert(&mut self, id: RecordId) {
        self.kill(id);
        self.fresh.insert(id);
    }

    /// `id` is gone.
    pub(crate) fn remove(&mut self, id: RecordId) {
        self.kill(id);
        self.fresh.remove(&id);
    }

    fn kill(&mut self, id: RecordId) {
        if self.live.remove(&id).is_some() {
            self.dead += 1;
        }
    }

    fn vector(&self, point: u32) -> &[f32] {
        let start = point as usize * self.dim;
        &self.layout.vectors[start..start + self.dim]
    }

    /// Up to `k` live graph records near the unit vector `query`, best first, with their
    /// cosine similarity, found by a beam of `ef` (at least `k`) candidates.
    pub(crate) fn search(&self, query: &[f32], k: usize, ef: usize) -> Vec<(RecordId, f32)> {
        let n = self.point_rid.len();
        let ef = ef.max(k);
        if n == 0 || k == 0 {
            return Vec::new();
        }
        // The beam compares codes; its best candidates are scored exactly at the end.
        let code = self.layout.codes.query(query);
        let similarity = |point: u32| self.layout.codes.similarity(&code, point);
        // Greedy descent through the upper layers.
        let mut current = self.layout.entry;
        let mut best = similarity(current);
        for layer in self.layout.upper.iter().rev() {
            loop {
                let mut moved = false;
                for &next in layer.get(&current).into_iter().flatten() {
                    let s = similarity(next);
                    if s > best {
                        (best, current, moved) = (s, next, true);
                    }
                }
                if !moved {
                    break;
                }
            }
        }

        // Best-first beam search on layer 0.
        let mut visited = vec![0u64; n.div_ceil(64)];
        let mut visit = |p: u32| {
            let (word, bit) = (p as usize / 64, 1u64 << (p % 64));
            let seen = visited[word] & bit != 0;
            visited[word] |= bit;
            !seen
        };
        visit(current);
        let mut frontier = BinaryHeap::with_capacity(ef * 4);
        let mut found: BinaryHeap<std::cmp::Reverse<Scored>> = BinaryHeap::with_capacity(ef + 1);
        frontier.push(Scored(best, current));
        found.push(std::cmp::Reverse(Scored(best, current)));
        while let Some(Scored(s, point)) = frontier.pop() {
            let worst = found.peek().map_or(f32::NEG_INFINITY, |w| w.0 .0);
            if found.len() >= ef && s < worst {
                break;
            }
            let (from, to) = (
                self.layout.offsets[point as usize],
                self.layout.offsets[point as usize + 1],
            );
            let neighbours = &self.layout.links[from as usize..to as usize];
            for &next in neighbours {
                self.layout.codes.prefetch(next);
            }
            for &next in neighbours {
                if !visit(next) {
                    continue;
                }
                let s = similarity(next);
                let worst = found.peek().map_or(f32::NEG_INFINITY, |w| w.0 .0);
                if found.len() < ef || s > worst {
                    frontier.push(Scored(s, next));
                    found.push(std::cmp::Reverse(Scored(s, next)));
                    if found.len() > ef {
                        found.pop();
                    }
                }
            }
        }
        // The codes put each candidate within about 0.01 of its similarity, so the exact top
        // `k` of the beam's candidates is, all but always, among the best few times `k` by code.
        let mut candidates: Vec<(u32, RecordId)> = found
            .into_sorted_vec()
            .into_iter()
            .filter_map(|std::cmp::Reverse(Scored(_, p))| {
                let id = self.point_rid[p as usize];
                (self.live.get(&id) == Some(&p)).then_some((p, id))
            })
            .collect();
        candidates.truncate(k.saturating_mul(RESCORED_PER_RESULT));
        for (p, _) in &candidates {
            prefetch(self.vector(*p));
        }
        let mut hits: Vec<(RecordId, f32)> = candidates
            .into_iter()
            .map(|(p, id)| (id, dot(query, self.vector(p))))
            .collect();
        hits.sort_by(rank);
        hits.truncate(k);
        hits
    }
}

/// A point and its similarity, ordered by similarity (then point, for a total order).
#[derive(Clone, Copy)]
struct Scored(f32, u32);

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::seeded_unit as unit;

    #[test]
    fn a_raised_stop_flag_ends_a_build() {
        let (dim, n) = (16, 3 * BUILD_CHUNK as u64);
        let ids: Vec<RecordId> = (0..n).map(RecordId).collect();
        let data: Vec<f32> = (0..n).flat_map(|i| unit(i, dim)).collect();
        let stop = AtomicBool::new(true);
        assert!(Graph::build(&ids, &data, dim, &HnswParams::default(), &stop).is_none());
    }

    #[test]
    fn search_returns_exact_similarities_of_the_nearest_records() {
        let (dim, n) = (64, 2_000u64);
        let ids: Vec<RecordId> = (0..n).map(RecordId).collect();
        let data: Vec<f32> = (0..n).flat_map(|i| unit(i, dim)).collect();
        let graph = Graph::build(
            &ids,
            &data,
            dim,
            &HnswParams::default(),
            &AtomicBool::new(false),
        )
        .unwrap();
        let mut found = 0;
        for q in 0..50u64 {
            let query = unit(10_000 + q, dim);
            let mut exact: Vec<(RecordId, f32)> = ids
                .iter()
                .map(|id| {
                    let start = id.0 as usize * dim;
                    (*id, dot(&query, &data[start..start + dim]))
                })
                .collect();
            exact.sort_by(rank);
            let hits = graph.search(&query, 10, 64);
            assert_eq!(hits.len(), 10);
            for (id, score) in &hits {
                let start = id.0 as usize * dim;
                assert_eq!(
                    *score,
                    dot(&query, &data[start..start + dim]),
                    "rescored exactly"
                );
            }
            found += hits.iter().filter(|h| exact[..10].contains(h)).count();
        }
        // Codes steer the beam; the recall stays that of a graph search.
        assert!(
            found >= 50 * 10 * 95 / 100,
            "recall@10 {}",
            found as f32 / 500.0
        );
    }
}
