//! The searchable form of an HNSW graph: codes and links in flat arrays, in point order.
//!
//! Layer-0 links are kept in compressed rows, the sparse upper layers apart ([`UpperLayer`]),
//! and a search is
//! a plain best-first beam with a bitset of visited points. The beam compares int8 codes of the
//! vectors (a quarter of the bytes, see [`Codes`]), loaded ahead a whole neighbour list at a
//! time. A layout keeps no vectors: its collection scores the beam's best candidates exactly
//! from its own arena.
//!
//! A layout is immutable, so the codes and links of one read from a vector file stay in the
//! file's pages ([`Stored`]). Every graph is made by inserting points into a layout
//! (`super::insert`): the first build into [`Layout::empty`], a growth into the current one.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::codes::{Codes, QueryCode};
use super::mapped::Stored;
use super::upper::UpperLayer;

/// Points inserted between two looks at the stop flag (about half a second of a 384-d build).
pub(crate) const BUILD_CHUNK: usize = 1024;

/// The links of a graph's upper layers, layer 1 first.
pub(crate) type UpperLayers = Vec<UpperLayer>;

/// Codes and links of a graph's points, in point order.
pub(crate) struct Layout {
    /// The points' int8 codes, which the beam search compares.
    pub(crate) codes: Codes,
    /// Layer-0 links of point `p`: `links[offsets[p]..offsets[p + 1]]`.
    pub(crate) offsets: Stored<u32>,
    pub(crate) links: Stored<u32>,
    /// Links on layers 1, 2, … of the points that reach them.
    pub(crate) upper: UpperLayers,
    /// Where every search starts: a point of the top layer.
    pub(crate) entry: u32,
}

impl Layout {
    /// The layout of no point, whose codes take their scales from the first points inserted.
    pub(crate) fn empty(dim: usize) -> Layout {
        Layout {
            codes: Codes::encode(&[], dim),
            offsets: Stored::Owned(vec![0]),
            links: Stored::Owned(Vec::new()),
            upper: Vec::new(),
            entry: 0,
        }
    }

    /// Number of points.
    pub(crate) fn points(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Bytes of the codes and links (in memory or mapped, counted alike) and the upper layers.
    pub(crate) fn heap_bytes(&self) -> usize {
        let upper: usize = self.upper.iter().map(UpperLayer::heap_bytes).sum();
        self.codes.heap_bytes() + self.offsets.bytes() + self.links.bytes() + upper
    }

    /// The layer-0 neighbours of `point`.
    pub(crate) fn row(&self, point: u32) -> &[u32] {
        let p = point as usize;
        &self.links[self.offsets[p] as usize..self.offsets[p + 1] as usize]
    }

    /// Up to `ef` points near the unit vector `query` by a best-first beam of `ef`
    /// candidates, best first by their codes' similarity.
    pub(crate) fn beam(&self, query: &[f32], ef: usize) -> Vec<u32> {
        let n = self.points();
        if n == 0 || ef == 0 {
            return Vec::new();
        }
        let code = self.codes.query(query);
        // Greedy descent through the upper layers.
        let mut current = self.entry;
        let mut best = self.codes.similarity(&code, current);
        let mut scores = Vec::new();
        for layer in self.upper.iter().rev() {
            loop {
                let mut moved = false;
                let linked = layer.get(current);
                self.codes.similarities(&code, linked, &mut scores);
                for (&next, &s) in linked.iter().zip(&scores) {
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
        let visit = |p: u32| {
            let (word, bit) = (p as usize / 64, 1u64 << (p % 64));
            let seen = visited[word] & bit != 0;
            visited[word] |= bit;
            !seen
        };
        let entry = Scored(best, current);
        best_first(&self.codes, &code, &[entry], ef, |p| self.row(p), visit)
            .into_iter()
            .map(|Scored(_, p)| p)
            .collect()
    }

    /// Checks what a search relies on, for a layout read from a file whose link offsets
    /// were checked to rise: a code per point, and every link, upper-layer point and the
    /// entry name one of the points. Returns what is wrong.
    pub(crate) fn check(&self) -> Result<(), String> {
        let n = self.points();
        if self.codes.points() != n {
            return Err(format!("{} codes for {n} points", self.codes.points()));
        }
        let names_a_point = |p: &u32| (*p as usize) < n;
        let upper_ok = self
            .upper
            .iter()
            .flat_map(|layer| layer.rows())
            .all(|(p, links)| names_a_point(&p) && links.iter().all(names_a_point));
        // Folded rather than `all`, which stops early and so compares one link at a time;
        // this compares whole vectors of them (1.3 M links of a 100k graph, at every reopen:
        // 0.5–0.8 → 0.25 ms alone).
        let links_ok = match u32::try_from(n) {
            Ok(n) => self.links.iter().fold(0, |bad, &p| bad | u32::from(p >= n)) == 0,
            Err(_) => true,
        };
        if !links_ok || !upper_ok {
            return Err("a link names no point".into());
        }
        if n > 0 && !names_a_point(&self.entry) {
            return Err(format!("entry point {} of {n}", self.entry));
        }
        Ok(())
    }
}

/// Up to `ef` points near `query`, best first, by a best-first beam from `entries` over the
/// neighbour lists `neighbours` gives: what a search does on layer 0 and an insertion on every
/// layer. `visit` tells whether a point is seen for the first time; each point is compared
/// once. A point's neighbours not seen before are compared together ([`Codes::similarities`],
/// their codes loaded ahead), then taken in their order, as one by one.
pub(super) fn best_first<'a>(
    codes: &Codes,
    query: &QueryCode,
    entries: &[Scored],
    ef: usize,
    neighbours: impl Fn(u32) -> &'a [u32],
    mut visit: impl FnMut(u32) -> bool,
) -> Vec<Scored> {
    let mut frontier = BinaryHeap::with_capacity(ef * 4);
    let mut found: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(ef + 1);
    let (mut fresh, mut scores) = (Vec::new(), Vec::new());
    for &entry in entries {
        visit(entry.1);
        frontier.push(entry);
        found.push(Reverse(entry));
        if found.len() > ef {
            found.pop();
        }
    }
    while let Some(Scored(s, point)) = frontier.pop() {
        let worst = found.peek().map_or(f32::NEG_INFINITY, |w| w.0 .0);
        if found.len() >= ef && s < worst {
            break;
        }
        fresh.clear();
        for &next in neighbours(point) {
            if visit(next) {
                codes.prefetch(next);
                fresh.push(next);
            }
        }
        codes.similarities(query, &fresh, &mut scores);
        for (&next, &s) in fresh.iter().zip(&scores) {
            let worst = found.peek().map_or(f32::NEG_INFINITY, |w| w.0 .0);
            if found.len() < ef || s > worst {
                frontier.push(Scored(s, next));
                found.push(Reverse(Scored(s, next)));
                if found.len() > ef {
                    found.pop();
                }
            }
        }
    }
    found
        .into_sorted_vec()
        .into_iter()
        .map(|Reverse(s)| s)
        .collect()
}

/// A point and its similarity, ordered by similarity (then point, for a total order).
#[derive(Clone, Copy)]
pub(super) struct Scored(pub(super) f32, pub(super) u32);

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

    /// Three points of dimension 2 linked in a ring, with `last` as the third point's link.
    fn ring(last: u32) -> Layout {
        let codes = Codes::from_parts(2, vec![1.0, 1.0], Stored::Owned(vec![0; 6])).unwrap();
        Layout {
            codes,
            offsets: Stored::Owned(vec![0, 1, 2, 3]),
            links: Stored::Owned(vec![1, 2, last]),
            upper: Vec::new(),
            entry: 0,
        }
    }

    #[test]
    fn a_link_past_the_last_point_is_found() {
        assert_eq!(ring(0).check(), Ok(()));
        assert!(ring(3).check().is_err());
        assert!(ring(u32::MAX).check().is_err());
    }
}
