//! Bounded selection of the best `k` (id, score) pairs of an exact scan, in the engine's
//! order (score, then age).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::distance::rank;
use crate::record::RecordId;

/// Bounded selection of the best `k` (id, score) pairs.
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Ranked>,
}

/// Heap entry ordered so that the heap's top is the worst kept candidate.
struct Ranked(RecordId, f32);

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        rank(&(self.0, self.1), &(other.0, other.1))
    }
}

impl TopK {
    /// Keeps at most `k` pairs.
    pub(crate) fn new(k: usize) -> Self {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// Keeps `(id, score)` if it is among the best `k` offered so far.
    pub(crate) fn offer(&mut self, id: RecordId, score: f32) {
        if self.heap.len() < self.k {
            self.heap.push(Ranked(id, score));
        } else if let Some(worst) = self.heap.peek() {
            if rank(&(id, score), &(worst.0, worst.1)) == Ordering::Less {
                self.heap.pop();
                self.heap.push(Ranked(id, score));
            }
        }
    }

    /// The pairs kept, best first.
    pub(crate) fn into_sorted(self) -> Vec<(RecordId, f32)> {
        let mut v: Vec<(RecordId, f32)> = self.heap.into_iter().map(|r| (r.0, r.1)).collect();
        v.sort_by(rank);
        v
    }
}
