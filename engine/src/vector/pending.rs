//! The records of a collection whose vectors are in the store but not yet in memory.
//!
//! A collection read back from a vector file has its graph but not the floats of the graph's
//! live points ([`super::source`]). Those records are *pending*: a search scores the ones the
//! graph proposes from the store, and a background load ([`load`]) moves every pending
//! record's vector into the collection's slots. A record written meanwhile stops being
//! pending (its new vector is in memory; a removed one is gone), so a load never brings back
//! an older vector than the collection has.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::points::PointMap;
use super::source::VectorSource;
use crate::error::{Error, Result};
use crate::record::RecordId;

/// Records a load moves into memory at a time, under one write lock that searches wait for
/// (1.5 MiB of 384-d vectors, about a millisecond).
pub(super) const LOAD_BATCH: usize = 1024;

/// Pending records and the store they are read from.
pub(super) struct Pending {
    /// The pending records (with their graph points, which the load does not need: the map
    /// is the graph's, copied, which is cheaper than hashing every record into a set).
    ids: PointMap,
    source: Arc<dyn VectorSource>,
    /// Set when a load failed: searches still read the store, and no load is tried again.
    failed: bool,
}

impl Pending {
    /// `ids`, whose vectors are read from `source`.
    pub(super) fn new(ids: PointMap, source: Arc<dyn VectorSource>) -> Pending {
        Pending {
            ids,
            source,
            failed: false,
        }
    }

    /// Number of pending records.
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether `id` is pending.
    pub(super) fn contains(&self, id: &RecordId) -> bool {
        self.ids.contains(*id)
    }

    /// Forgets `id` (written or removed in memory); returns whether it was pending.
    pub(super) fn remove(&mut self, id: &RecordId) -> bool {
        self.ids.remove(*id).is_some()
    }

    /// The pending records left, after a load went through the whole store.
    pub(super) fn drain(&mut self) -> Vec<RecordId> {
        std::mem::take(&mut self.ids).records().collect()
    }

    /// Estimated heap bytes.
    pub(super) fn bytes(&self) -> usize {
        self.ids.heap_bytes()
    }

    /// The source, for a background load.
    pub(super) fn source(&self) -> Arc<dyn VectorSource> {
        Arc::clone(&self.source)
    }

    /// Whether a background load should start.
    pub(super) fn wants_load(&self) -> bool {
        !self.failed
    }

    /// Notes that a load failed, so that none is tried again.
    pub(super) fn load_failed(&mut self) {
        self.failed = true;
    }

    /// The vectors of `ids` (pending records, in any order) from the store, each of `dim`
    /// floats, as `(id, vector)`; records the store lacks are left out.
    pub(super) fn fetch(
        &self,
        mut ids: Vec<RecordId>,
        dim: usize,
    ) -> Result<Vec<(RecordId, Vec<f32>)>> {
        ids.sort_unstable();
        let vectors = self.source.get(&ids)?;
        let mut out = Vec::with_capacity(ids.len());
        for (id, vector) in ids.into_iter().zip(vectors) {
            match vector {
                Some(v) if v.len() == dim => out.push((id, v)),
                Some(v) => return Err(wrong_length(id, v.len(), dim)),
                None => {}
            }
        }
        Ok(out)
    }
}

/// Reads every vector of `source` in batches, handing each batch (ids, then their vectors one
/// after the other) to `fill`; stops early, returning `Ok(false)`, once `stop` is raised.
pub(super) fn load(
    source: &dyn VectorSource,
    dim: usize,
    stop: &AtomicBool,
    mut fill: impl FnMut(&[RecordId], &[f32]),
) -> Result<bool> {
    let mut after = None;
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(false);
        }
        let (ids, data) = source.next_batch(after, LOAD_BATCH)?;
        let Some(last) = ids.last() else {
            return Ok(true);
        };
        if data.len() != ids.len() * dim {
            return Err(wrong_length(*last, data.len() / ids.len().max(1), dim));
        }
        after = Some(*last);
        fill(&ids, &data);
    }
}

fn wrong_length(id: RecordId, len: usize, dim: usize) -> Error {
    Error::Corrupt {
        what: "vector",
        detail: format!("record {} has {len} floats in a space of {dim}", id.0),
    }
}
