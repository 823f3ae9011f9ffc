//! The tombstones a batch writes for the records it deletes: one point delete per key, or one
//! range delete for a run of consecutive record ids.
//!
//! A filtered delete mostly removes records that were written together (a conversation, a
//! session, a source), whose ids are consecutive; after a bulk load, inserting a thousand
//! records' four point tombstones into RocksDB's memtables was most of its write
//! (`docs/history.md`). A run of consecutive ids, all of them deleted, is one key range in each
//! family keyed by record id, holding nothing else, so one range tombstone per family says the
//! same as the run's point tombstones:
//! - [`delete_records`]: the records (`ns | id`) and their vectors (`ns | id | space`);
//! - [`delete_index_entries`]: the attribute index (`ns | pair digest | id`: a run of one
//!   attribute pair's entries).
//!
//! Shorter runs keep point tombstones: RocksDB keeps range tombstones apart from the keys,
//! every read of the family looks them up until a compaction drops them, and one costs about
//! three points to insert.

use crate::store::{FamilyHandle, StoreBatch};

use crate::attributes::{next_entry, IndexKey};
use crate::keys::{record_key, vector_keys};
use crate::record::RecordId;

/// Consecutive deleted keys from which one range tombstone replaces their point tombstones.
const RANGE_FROM: usize = 16;

/// Adds to `batch` the tombstones of records `ids` of namespace `ns` (ascending, distinct) and
/// of their vectors, in every space of `spaces`.
pub(super) fn delete_records(
    batch: &mut StoreBatch,
    (records, vectors): (FamilyHandle<'_>, FamilyHandle<'_>),
    ns: u32,
    ids: &[RecordId],
    spaces: &[String],
) {
    for run in ids.chunk_by(|a, b| a.0.checked_add(1) == Some(b.0)) {
        let (first, last) = (run[0], run[run.len() - 1]);
        match last.0.checked_add(1) {
            Some(end) if run.len() >= RANGE_FROM => {
                let (from, to) = (record_key(ns, first), record_key(ns, RecordId(end)));
                batch.delete_range(records, from, to);
                batch.delete_range(vectors, from, to);
            }
            _ => {
                for &id in run {
                    batch.delete(records, record_key(ns, id));
                    for key in vector_keys(ns, id, spaces) {
                        batch.delete(vectors, key);
                    }
                }
            }
        }
    }
}

/// Adds to `batch` the tombstones of the attribute index entries `keys` (ascending, distinct).
pub(super) fn delete_index_entries(
    batch: &mut StoreBatch,
    index: FamilyHandle<'_>,
    keys: &[IndexKey],
) {
    for run in keys.chunk_by(|a, b| next_entry(a).as_ref() == Some(b)) {
        match next_entry(&run[run.len() - 1]) {
            Some(end) if run.len() >= RANGE_FROM => batch.delete_range(index, run[0], end),
            _ => {
                for key in run {
                    batch.delete(index, key);
                }
            }
        }
    }
}
