//! Where a collection reads the vectors it does not hold in memory: the store.
//!
//! A vector file keeps a graph's codes and links but not the floats of its live points, which
//! the store has already: a second copy made the engine's disk 2.2× the raw text and vectors.
//! A namespace reopened from such a file searches its graph at once and scores the graph's
//! candidates from the store, while a background load brings the floats into memory
//! (`super::collection`).

use crate::error::Result;
use crate::record::RecordId;

/// Read access to the stored vectors of one collection (one namespace, one space).
pub(crate) trait VectorSource: Send + Sync {
    /// The vectors of `ids` (in ascending order), in that order; `None` for a record the
    /// store has no vector of.
    fn get(&self, ids: &[RecordId]) -> Result<Vec<Option<Vec<f32>>>>;

    /// Up to `max` records after `after` (from the first when `None`) with their vectors, in
    /// id order: the ids, and their vectors one after the other. Empty once past the last.
    fn next_batch(&self, after: Option<RecordId>, max: usize) -> Result<(Vec<RecordId>, Vec<f32>)>;
}

/// Vectors in memory standing in for the store, in tests.
#[cfg(test)]
pub(crate) struct MemorySource(std::collections::BTreeMap<RecordId, Vec<f32>>);

#[cfg(test)]
impl MemorySource {
    /// The records and vectors of `collection` (every one in memory), as the store has them.
    pub(crate) fn of(collection: &super::collection::VectorCollection) -> std::sync::Arc<Self> {
        std::sync::Arc::new(MemorySource(collection.by_id().into_iter().collect()))
    }

    /// No vectors, for files without a graph.
    pub(crate) fn none(_space: &str) -> std::sync::Arc<dyn VectorSource> {
        std::sync::Arc::new(MemorySource(Default::default()))
    }
}

#[cfg(test)]
impl VectorSource for MemorySource {
    fn get(&self, ids: &[RecordId]) -> Result<Vec<Option<Vec<f32>>>> {
        Ok(ids.iter().map(|id| self.0.get(id).cloned()).collect())
    }

    fn next_batch(&self, after: Option<RecordId>, max: usize) -> Result<(Vec<RecordId>, Vec<f32>)> {
        use std::ops::Bound::{Excluded, Unbounded};
        let from = after.map_or(Unbounded, Excluded);
        let (mut ids, mut data) = (Vec::new(), Vec::new());
        for (id, vector) in self.0.range((from, Unbounded)).take(max) {
            ids.push(*id);
            data.extend_from_slice(vector);
        }
        Ok((ids, data))
    }
}
