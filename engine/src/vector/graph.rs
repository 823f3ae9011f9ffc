//! The HNSW graph of a large collection: its layout, the record of each point, and what
//! changed since the points were inserted.
//!
//! A [`Layout`] is immutable. Records removed or changed after it was made become tombstones
//! that searches skip; changed and new records are *fresh*: the collection searches them exactly
//! beside the graph. Once they reach a fraction of it, they are inserted into a new layout made
//! from the current one (`super::insert`): each record is inserted once, whatever the
//! collection's size, instead of the whole graph being rebuilt every time fresh records reach a
//! fraction of it. Only tombstones, which an HNSW graph cannot drop, call for a rebuild. A graph
//! read back from a vector file is the same kind of graph: it serves searches at once and grows
//! like any other.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::insert;
use super::layout::Layout;
use super::params::HnswParams;
use super::points::PointMap;
use crate::record::RecordId;

/// Candidates the beam hands to exact scoring, per result asked for.
const RESCORED_PER_RESULT: usize = 4;

/// An HNSW graph over the records of a collection, with tombstones and fresh records.
pub(crate) struct Graph {
    /// Shared with a background growth, which reads it off the collection's lock.
    layout: Arc<Layout>,
    /// Record of each point.
    point_rid: Vec<RecordId>,
    /// The point of each record still current in the graph.
    live: PointMap,
    dead: usize,
    /// Records added or changed since they were last inserted, searched exactly by the collection.
    fresh: FxHashSet<RecordId>,
}

impl Graph {
    /// Estimated heap bytes: the layout and the bookkeeping maps.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.layout.heap_bytes()
            + self.point_rid.capacity() * 8
            + self.live.heap_bytes()
            + self.fresh.capacity() * 16
    }

    /// Builds the graph of `ids` and their `dim`-dimensional unit vectors (`data`); `None`
    /// when `stop` was raised meanwhile (or, logged, when `ids` repeats a record).
    pub(crate) fn build(
        ids: &[RecordId],
        data: &[f32],
        dim: usize,
        params: &HnswParams,
        stop: &AtomicBool,
    ) -> Option<Graph> {
        let layout = insert::extend(&Layout::empty(dim), data, dim, params, stop)?;
        let live = match PointMap::from_entries(ids.iter().zip(0..).map(|(id, p)| (*id, p))) {
            Ok(live) => live,
            Err(id) => {
                tracing::error!("record {id} given twice to a graph build; build abandoned");
                return None;
            }
        };
        Some(Graph {
            layout: Arc::new(layout),
            point_rid: ids.to_vec(),
            live,
            dead: 0,
            fresh: FxHashSet::default(),
        })
    }

    /// The graph of `layout` read back from a vector file, whose points are the records
    /// `point_rid` but for the tombstones `dead`, beside the records `fresh`, which must be no
    /// live point. As [`Graph::point_rid`] and [`Graph::dead_points`] gave them; an error says
    /// what does not fit.
    pub(crate) fn restored(
        layout: Layout,
        point_rid: Vec<RecordId>,
        dead: &[u32],
        fresh: impl Iterator<Item = RecordId>,
    ) -> Result<Graph, String> {
        layout.check()?;
        if point_rid.len() != layout.points() {
            return Err(format!(
                "{} records for {} points",
                point_rid.len(),
                layout.points()
            ));
        }
        let mut is_dead = vec![false; point_rid.len()];
        for &p in dead {
            match is_dead.get_mut(p as usize) {
                Some(flag) if !*flag => *flag = true,
                _ => return Err(format!("tombstone {p} repeated or of no point")),
            }
        }
        let live_points = point_rid.iter().zip(0..).zip(&is_dead);
        let live = live_points
            .filter(|(_, dead)| !**dead)
            .map(|((id, p), _)| (*id, p));
        let live = PointMap::from_entries(live)
            .map_err(|id| format!("record {} at two live points", id.0))?;
        let fresh: FxHashSet<RecordId> = fresh.collect();
        if let Some(id) = fresh.iter().find(|id| live.contains(**id)) {
            return Err(format!("record {} both fresh and at a live point", id.0));
        }
        Ok(Graph {
            layout: Arc::new(layout),
            point_rid,
            live,
            dead: dead.len(),
            fresh,
        })
    }

    /// The codes and links searched.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The layout, for a background growth (`super::insert::extend`).
    pub(crate) fn shared_layout(&self) -> Arc<Layout> {
        Arc::clone(&self.layout)
    }

    /// The record of each point.
    pub(crate) fn point_rid(&self) -> &[RecordId] {
        &self.point_rid
    }

    /// The tombstones: points of records removed or changed since their insertion.
    pub(crate) fn dead_points(&self) -> Vec<u32> {
        (0..self.point_rid.len() as u32)
            .filter(|p| self.live.get(self.point_rid[*p as usize]) != Some(*p))
            .collect()
    }

    /// Adopts a layout grown from this graph's with `ids` as the points after the
    /// current ones: they stop being fresh and become live points. Returns `false`, changing
    /// nothing, when the layout does not continue this graph.
    pub(crate) fn adopt(&mut self, ids: &[RecordId], layout: Layout) -> bool {
        let first = self.point_rid.len();
        if layout.points() != first + ids.len() {
            return false;
        }
        for (p, id) in (first..).zip(ids) {
            self.fresh.remove(id);
            self.live.insert(*id, p as u32);
        }
        self.point_rid.extend_from_slice(ids);
        self.layout = Arc::new(layout);
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

    /// Whether `id` is a live point (not a tombstone, not fresh).
    pub(crate) fn is_live(&self, id: &RecordId) -> bool {
        self.live.contains(*id)
    }

    /// The records at live points, with their points.
    pub(crate) fn live_points(&self) -> &PointMap {
        &self.live
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
        if self.live.remove(id).is_some() {
            self.dead += 1;
        }
    }

    /// The live graph records likeliest to be the `k` nearest the unit vector `query`,
    /// found by a beam of `ef` (at least `k`) candidates: a few times `k` of them, best first
    /// by their codes, for the collection to score exactly. The codes put each candidate
    /// within about 0.01 of its similarity, so the exact top `k` of the beam's candidates is,
    /// all but always, among them.
    pub(crate) fn candidates(&self, query: &[f32], k: usize, ef: usize) -> Vec<RecordId> {
        if k == 0 {
            return Vec::new();
        }
        let mut candidates: Vec<RecordId> = self
            .layout
            .beam(query, ef.max(k))
            .into_iter()
            .filter_map(|p| {
                let id = self.point_rid[p as usize];
                (self.live.get(id) == Some(p)).then_some(id)
            })
            .collect();
        candidates.truncate(k.saturating_mul(RESCORED_PER_RESULT));
        candidates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::distance::{dot, rank};
    use crate::vector::layout::BUILD_CHUNK;
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
    fn candidates_hold_the_nearest_live_records() {
        let (dim, n) = (64, 2_000u64);
        let ids: Vec<RecordId> = (0..n).map(RecordId).collect();
        let data: Vec<f32> = (0..n).flat_map(|i| unit(i, dim)).collect();
        let mut graph = Graph::build(
            &ids,
            &data,
            dim,
            &HnswParams::default(),
            &AtomicBool::new(false),
        )
        .unwrap();
        let removed: Vec<RecordId> = (0..n).step_by(10).map(RecordId).collect();
        for id in &removed {
            graph.remove(*id);
        }
        let mut found = 0;
        for q in 0..50u64 {
            let query = unit(10_000 + q, dim);
            let mut exact: Vec<(RecordId, f32)> = ids
                .iter()
                .filter(|id| !removed.contains(id))
                .map(|id| {
                    let start = id.0 as usize * dim;
                    (*id, dot(&query, &data[start..start + dim]))
                })
                .collect();
            exact.sort_by(rank);
            let candidates = graph.candidates(&query, 10, 64);
            assert_eq!(candidates.len(), 10 * RESCORED_PER_RESULT);
            assert!(candidates.iter().all(|id| !removed.contains(id)));
            found += exact[..10]
                .iter()
                .filter(|(id, _)| candidates.contains(id))
                .count();
        }
        // Codes steer the beam; the recall stays that of a graph search.
        assert!(
            found >= 50 * 10 * 95 / 100,
            "recall@10 {}",
            found as f32 / 500.0
        );
    }
}
