//! How every HNSW graph is made: points inserted into a layout, the first build into an
//! empty one, a growth (a graph's fresh records, in a batch once they reach a fraction of its
//! points: `super::graph`) into the current one.
//!
//! The graphs were first built by `hnsw_rs` and copied out. Its structure (a second copy of
//! every vector, a point, a lock and a reference per link) cost a quarter of a 100k
//! namespace's memory while it lived, and it could only insert into itself, so a graph read
//! back from a vector file could only be rebuilt from scratch. Growth came here first; since
//! 2026-11-28 the first build too: on one thread it keeps up with `hnsw_rs` on two (it
//! compares int8 codes, not floats), with recall@10 within the spread of `hnsw_rs`'s builds and
//! a lower peak memory (docs/history.md has the measurements). Being one thread, it gives the
//! same graph on every run, and leaves the other core to searches.
//!
//! The layout holds what insertion needs: codes to compare and links to walk. Its parts here:
//! - [`extend`]: encodes the new points with the layout's scales, inserts them one by one and
//!   hands back the grown layout (the old one is not changed: searches go on with it);
//! - `Links`: the graph being grown; its `Rows` are the layout's links copied into rows of a
//!   fixed width, so a row grows in place, and its `Visits` the marks of the current beam;
//! - `Links::insert`: the HNSW insertion of one point (a level drawn from the point's number;
//!   a greedy descent to it; on each layer below, a beam of `ef_construction` (the search's
//!   own, `super::layout::best_first`), neighbours chosen by the diversity heuristic, and
//!   links back that prune a full row by the same heuristic);
//! - `select`: that heuristic, on codes.

use std::sync::atomic::{AtomicBool, Ordering};

use super::codes::{Codes, QueryCode};
use super::layout::{best_first, Layout, Scored, UpperLayers, BUILD_CHUNK};
use super::mapped::Stored;
use super::params::HnswParams;

/// Highest layer a point is given.
const MAX_LEVEL: usize = 15;

/// The layout of `layout`'s points followed by `data`'s (unit vectors of `dim`, the points
/// `layout.points()..`), each inserted with `params`; `None` once `stop` is raised (looked at
/// every [`BUILD_CHUNK`] points).
pub(crate) fn extend(
    layout: &Layout,
    data: &[f32],
    dim: usize,
    params: &HnswParams,
    stop: &AtomicBool,
) -> Option<Layout> {
    let first = layout.points();
    let added = data.len() / dim.max(1);
    let m = params.max_connections.max(2);
    let mut links = Links::of(layout, first + added, 2 * m);
    let codes = layout.codes.extended(data);
    let ef = params.ef_construction.max(m);
    for (i, vector) in data.chunks_exact(dim).enumerate() {
        if i % BUILD_CHUNK == 0 && stop.load(Ordering::SeqCst) {
            return None;
        }
        let point = (first + i) as u32;
        links.insert(&codes, point, vector, level_of(point, m), ef, m);
    }
    Some(links.into_layout(codes))
}

/// The layer of `point`: geometric with ratio `1 / m`, as HNSW draws it, from a hash of the
/// point's number so that a grown layout is the same on every run.
fn level_of(point: u32, m: usize) -> usize {
    // splitmix64 of the point's number.
    let mut x = u64::from(point).wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    // Uniform in (0, 1].
    let uniform = ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let level = -uniform.ln() / (m as f64).ln();
    (level as usize).min(MAX_LEVEL)
}

/// A graph being grown: its links, its entry and the visit marks of its beams.
struct Links {
    rows: Rows,
    /// Where searches start; `None` until the first point.
    entry: Option<u32>,
    visits: Visits,
}

/// The neighbour lists of every layer.
struct Rows {
    /// Width of a layer-0 row (twice `M`, or the layout's longest row if longer).
    width: usize,
    /// Layer-0 rows, `width` slots per point, the first `degree[p]` of them used.
    base: Vec<u32>,
    degree: Vec<u32>,
    /// Layers 1, 2, …, as in [`Layout::upper`].
    upper: UpperLayers,
}

/// Which points the current beam has seen: those whose mark is `epoch`, so that a new beam
/// clears nothing.
struct Visits {
    marks: Vec<u32>,
    epoch: u32,
}

impl Visits {
    /// Starts a beam: the returned function tells whether a point is seen for the first time.
    fn start(&mut self) -> impl FnMut(u32) -> bool + '_ {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.fill(0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        move |point| std::mem::replace(&mut self.marks[point as usize], epoch) != epoch
    }
}

impl Links {
    /// The links of `layout`, with room for `points` points in all and layer-0 rows of at
    /// least `width`.
    fn of(layout: &Layout, points: usize, width: usize) -> Links {
        let old = layout.points();
        let width = (0..old as u32)
            .map(|p| layout.row(p).len())
            .max()
            .unwrap_or(0)
            .max(width);
        let mut base = vec![0; points * width];
        let mut degree = vec![0; points];
        for p in 0..old {
            let linked = layout.row(p as u32);
            base[p * width..p * width + linked.len()].copy_from_slice(linked);
            degree[p] = linked.len() as u32;
        }
        Links {
            rows: Rows {
                width,
                base,
                degree,
                upper: layout.upper.clone(),
            },
            entry: (old > 0).then_some(layout.entry),
            visits: Visits {
                marks: vec![0; points],
                epoch: 0,
            },
        }
    }

    /// Inserts `point` (whose unit vector is `vector`) at `level`, linking it to up to `m`
    /// neighbours per layer found by beams of `ef`.
    fn insert(
        &mut self,
        codes: &Codes,
        point: u32,
        vector: &[f32],
        level: usize,
        ef: usize,
        m: usize,
    ) {
        let top = self.rows.upper.len();
        let Some(entry) = self.entry else {
            self.raise(point, level);
            return;
        };
        let query = codes.query(vector);
        let mut nearest = vec![Scored(codes.similarity(&query, entry), entry)];
        for layer in (level + 1..=top).rev() {
            nearest = self.beam(codes, &query, &nearest, 1, layer);
        }
        for layer in (0..=level.min(top)).rev() {
            let found = self.beam(codes, &query, &nearest, ef, layer);
            let chosen = select(codes, &found, m);
            let capacity = if layer == 0 { self.rows.width } else { m };
            for &neighbour in &chosen {
                self.link(codes, neighbour, point, layer, capacity);
            }
            self.rows.set_row(layer, point, chosen);
            nearest = found;
        }
        if level > top {
            self.raise(point, level);
        }
    }

    /// Makes `point` the entry, adding the layers up to `level` it is the first of.
    fn raise(&mut self, point: u32, level: usize) {
        while self.rows.upper.len() < level {
            self.rows.upper.push(Default::default());
            let layer = self.rows.upper.len();
            self.rows.set_row(layer, point, Vec::new());
        }
        if self.entry.is_none() || level >= self.rows.upper.len() {
            self.entry = Some(point);
        }
    }

    /// Adds `to` to the neighbours of `from` on `layer`; a row already at `capacity` keeps
    /// the heuristic's choice among its links and `to`.
    fn link(&mut self, codes: &Codes, from: u32, to: u32, layer: usize, capacity: usize) {
        let mut linked = self.rows.row(layer, from).to_vec();
        if linked.contains(&to) {
            return;
        }
        if linked.len() < capacity {
            linked.push(to);
        } else {
            let query = codes.point_query(from);
            let mut scored: Vec<Scored> = linked
                .iter()
                .chain([&to])
                .map(|&p| Scored(codes.similarity(&query, p), p))
                .collect();
            scored.sort_unstable_by(|a, b| b.cmp(a));
            linked = select(codes, &scored, capacity);
        }
        self.rows.set_row(layer, from, linked);
    }

    /// Up to `ef` points of `layer` near `query`, best first, by a beam from `entries`.
    fn beam(
        &mut self,
        codes: &Codes,
        query: &QueryCode,
        entries: &[Scored],
        ef: usize,
        layer: usize,
    ) -> Vec<Scored> {
        let rows = &self.rows;
        let visit = self.visits.start();
        best_first(codes, query, entries, ef, |p| rows.row(layer, p), visit)
    }

    /// The layout of these links and `codes`: layer-0 rows packed one after the other.
    fn into_layout(self, codes: Codes) -> Layout {
        let Rows {
            width,
            base,
            degree,
            upper,
        } = self.rows;
        let points = degree.len();
        let mut offsets = Vec::with_capacity(points + 1);
        let mut links = Vec::with_capacity(degree.iter().map(|d| *d as usize).sum());
        offsets.push(0);
        for p in 0..points {
            let start = p * width;
            links.extend_from_slice(&base[start..start + degree[p] as usize]);
            offsets.push(links.len() as u32);
        }
        Layout {
            codes,
            offsets: Stored::Owned(offsets),
            links: Stored::Owned(links),
            upper,
            entry: self.entry.unwrap_or(0),
        }
    }
}

impl Rows {
    /// The neighbours of `point` on `layer`.
    fn row(&self, layer: usize, point: u32) -> &[u32] {
        match layer {
            0 => {
                let start = point as usize * self.width;
                &self.base[start..start + self.degree[point as usize] as usize]
            }
            _ => self.upper[layer - 1].get(point),
        }
    }

    /// Replaces the neighbours of `point` on `layer`.
    fn set_row(&mut self, layer: usize, point: u32, linked: Vec<u32>) {
        match layer {
            0 => {
                let start = point as usize * self.width;
                self.base[start..start + linked.len()].copy_from_slice(&linked);
                self.degree[point as usize] = linked.len() as u32;
            }
            _ => {
                self.upper[layer - 1].insert(point, linked);
            }
        }
    }
}

/// HNSW's neighbour heuristic: from `candidates` (best first by similarity to the point being
/// linked), up to `m` that are each more similar to that point than to any candidate already
/// chosen, so that the links spread in different directions instead of into one cluster.
fn select(codes: &Codes, candidates: &[Scored], m: usize) -> Vec<u32> {
    let mut chosen: Vec<u32> = Vec::with_capacity(m);
    // The chosen points prepared as queries, made only once a later candidate needs them.
    let mut queries: Vec<QueryCode> = Vec::with_capacity(m);
    for &Scored(similarity, candidate) in candidates {
        if chosen.len() == m {
            break;
        }
        queries.extend(
            chosen[queries.len()..]
                .iter()
                .map(|&p| codes.point_query(p)),
        );
        if queries
            .iter()
            .all(|kept| codes.similarity(kept, candidate) < similarity)
        {
            chosen.push(candidate);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::distance::dot;
    use crate::vector::seeded_unit as unit;

    /// The layout built of `data` with the default parameters (every point inserted into an
    /// empty layout).
    fn build(data: &[f32], dim: usize) -> Layout {
        let params = HnswParams::default();
        extend(
            &Layout::empty(dim),
            data,
            dim,
            &params,
            &AtomicBool::new(false),
        )
        .unwrap()
    }

    /// Recall@10 of the layout's beam (ef 64) over the first `n` of `data` against exact
    /// search, over 50 queries.
    fn recall(layout: &Layout, data: &[f32], dim: usize) -> f32 {
        let n = data.len() / dim;
        let mut found = 0;
        for q in 0..50u64 {
            let query = unit(50_000 + q, dim);
            let mut exact: Vec<(u32, f32)> = (0..n)
                .map(|p| (p as u32, dot(&query, &data[p * dim..(p + 1) * dim])))
                .collect();
            exact.sort_by(|a, b| b.1.total_cmp(&a.1));
            let beam = layout.beam(&query, 64);
            found += exact[..10]
                .iter()
                .filter(|(p, _)| beam[..beam.len().min(40)].contains(p))
                .count();
        }
        found as f32 / 500.0
    }

    #[test]
    fn grown_points_are_found_as_well_as_built_ones() {
        let (dim, built, grown) = (32, 2_000u64, 1_000u64);
        let data: Vec<f32> = (0..built + grown).flat_map(|i| unit(i, dim)).collect();
        let params = HnswParams::default();
        let split = built as usize * dim;
        let layout = build(&data[..split], dim);
        let before = recall(&layout, &data[..split], dim);
        let grown_layout = extend(
            &layout,
            &data[split..],
            dim,
            &params,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(grown_layout.points(), (built + grown) as usize);
        grown_layout.check().unwrap();
        let after = recall(&grown_layout, &data, dim);
        assert!(
            after >= 0.95 && after >= before - 0.03,
            "recall {before} built, {after} grown"
        );
        // The old layout is untouched: searches go on with it until the new one is installed.
        assert_eq!(layout.points(), built as usize);
    }

    #[test]
    fn an_empty_layout_grows_from_its_first_point() {
        let dim = 16;
        let data: Vec<f32> = (0..300u64).flat_map(|i| unit(i, dim)).collect();
        let layout = build(&data, dim);
        layout.check().unwrap();
        assert!(recall(&layout, &data, dim) >= 0.95);
    }

    #[test]
    fn a_raised_stop_flag_ends_a_growth() {
        let dim = 8;
        let data: Vec<f32> = (0..100u64).flat_map(|i| unit(i, dim)).collect();
        let params = HnswParams::default();
        let layout = build(&data, dim);
        assert!(extend(&layout, &data, dim, &params, &AtomicBool::new(true)).is_none());
    }

    #[test]
    fn levels_are_geometric() {
        let levels: Vec<usize> = (0..100_000u32).map(|p| level_of(p, 16)).collect();
        let above = |l: usize| levels.iter().filter(|x| **x >= l).count() as f64 / 1e5;
        assert!((above(1) - 1.0 / 16.0).abs() < 0.01, "{}", above(1));
        assert!((above(2) - 1.0 / 256.0).abs() < 0.002, "{}", above(2));
    }
}
