//! Snapshots of the namespaces' BM25 statistics, written when the engine closes, so that the
//! first search after a reopen reads one value instead of re-analysing every record's text
//! (0.64 s of the 1.2 s a 100k-record namespace took to answer its first query).
//!
//! A snapshot is exact or absent:
//! - All are written in one batch at close, with the sequence number the store had then
//!   ([`META_STATS_SEQ`]). At open they are kept only if the store's sequence number is still
//!   that one; otherwise something wrote after them (a process that never closed) and they
//!   are deleted.
//! - During a session, the first write that changes records (in any namespace) deletes them
//!   all in its own batch, atomically with its change. So no snapshot ever describes records
//!   that have changed, and a deleted record's terms never outlive it in one (the deletion
//!   guarantee of `docs/service.md`). Namespaces whose statistics are in memory at close are
//!   written again then.

use std::sync::atomic::{AtomicBool, Ordering};

use rocksdb::WriteBatch;

use crate::error::Result;
use crate::keys::{
    decode_u64, encode_u64, prefix_end, stats_key, CF_META, META_STATS_PREFIX, META_STATS_SEQ,
};
use crate::lexical::LexicalStats;
use crate::store::Store;

/// Whether statistics snapshots are on disk, and their reading and writing.
pub(crate) struct Snapshots {
    on_disk: AtomicBool,
}

impl Snapshots {
    /// The snapshots of a store whose sequence number is `seq`: kept when they were written
    /// at that number, deleted otherwise.
    pub(crate) fn open(store: &Store, seq: u64) -> Result<Snapshots> {
        let written_at = store.get(CF_META, META_STATS_SEQ)?;
        let exact = written_at.as_deref().and_then(decode_u64) == Some(seq);
        if written_at.is_some() && !exact {
            let mut batch = WriteBatch::default();
            delete_all(store, &mut batch)?;
            store.write(batch)?;
        }
        Ok(Snapshots {
            on_disk: AtomicBool::new(exact),
        })
    }

    /// Namespace `ns`'s statistics as they were at the last close, if no write has changed
    /// any record since. A snapshot that does not decode is ignored (the caller rebuilds).
    pub(crate) fn stats(&self, store: &Store, ns: u32) -> Option<LexicalStats> {
        if !self.on_disk.load(Ordering::SeqCst) {
            return None;
        }
        let bytes = match store.get(CF_META, &stats_key(ns)) {
            Ok(bytes) => bytes?,
            Err(e) => {
                tracing::warn!("statistics snapshot of namespace {ns}: {e}; rebuilding");
                return None;
            }
        };
        let stats = LexicalStats::from_bytes(&bytes);
        if stats.is_none() {
            tracing::warn!("statistics snapshot of namespace {ns} does not decode; rebuilding");
        }
        stats
    }

    /// Adds the deletion of every snapshot to a write's batch, while any may exist; call
    /// [`Snapshots::invalidated`] once the batch is written.
    pub(crate) fn invalidate(&self, store: &Store, batch: &mut WriteBatch) -> Result<()> {
        if self.on_disk.load(Ordering::SeqCst) {
            delete_all(store, batch)?;
        }
        Ok(())
    }

    /// Notes that a batch from [`Snapshots::invalidate`] was written: none is left.
    pub(crate) fn invalidated(&self) {
        self.on_disk.store(false, Ordering::SeqCst);
    }

    /// Writes the statistics of the namespaces in memory (`(id, statistics)`) at the store's
    /// sequence number `seq`, when the engine closes and nothing writes any more.
    pub(crate) fn write<'a>(
        &self,
        store: &Store,
        seq: u64,
        namespaces: impl IntoIterator<Item = (u32, &'a LexicalStats)>,
    ) -> Result<()> {
        let meta = store.cf(CF_META)?;
        let mut batch = WriteBatch::default();
        for (ns, stats) in namespaces {
            batch.put_cf(meta, stats_key(ns), stats.to_bytes());
        }
        if batch.is_empty() && !self.on_disk.load(Ordering::SeqCst) {
            return Ok(());
        }
        batch.put_cf(meta, META_STATS_SEQ, encode_u64(seq));
        store.write(batch)?;
        self.on_disk.store(true, Ordering::SeqCst);
        Ok(())
    }
}

/// Adds the deletion of every snapshot and of their sequence number to `batch`.
fn delete_all(store: &Store, batch: &mut WriteBatch) -> Result<()> {
    let meta = store.cf(CF_META)?;
    batch.delete_range_cf(
        meta,
        META_STATS_PREFIX.to_vec(),
        prefix_end(META_STATS_PREFIX),
    );
    batch.delete_cf(meta, META_STATS_SEQ);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(text: &str) -> LexicalStats {
        let mut stats = LexicalStats::default();
        stats.add(&crate::namespace::Analyzer::Standard.analyze(text));
        stats
    }

    #[test]
    fn snapshots_are_kept_only_at_their_sequence_number() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), false).unwrap();
        let snapshots = Snapshots::open(&store, 5).unwrap();
        assert_eq!(snapshots.stats(&store, 1), None, "none yet");
        let one = stats("apple banana");
        snapshots.write(&store, 5, [(1, &one)]).unwrap();
        let reopened = Snapshots::open(&store, 5).unwrap();
        assert_eq!(reopened.stats(&store, 1), Some(one.clone()));
        assert_eq!(reopened.stats(&store, 2), None);

        // A write invalidates them, in its own batch.
        let mut batch = WriteBatch::default();
        reopened.invalidate(&store, &mut batch).unwrap();
        store.write(batch).unwrap();
        reopened.invalidated();
        assert_eq!(reopened.stats(&store, 1), None);
        assert_eq!(
            store.get(CF_META, &stats_key(1)).unwrap(),
            None,
            "gone from disk"
        );

        // Written at 7, opened at 8 (a process wrote and never closed): deleted.
        snapshots.write(&store, 7, [(1, &one)]).unwrap();
        let stale = Snapshots::open(&store, 8).unwrap();
        assert_eq!(stale.stats(&store, 1), None);
        assert_eq!(store.get(CF_META, &stats_key(1)).unwrap(), None);
        assert_eq!(store.get(CF_META, META_STATS_SEQ).unwrap(), None);

        // A snapshot that does not decode is ignored.
        snapshots.write(&store, 9, [(1, &one)]).unwrap();
        let mut batch = WriteBatch::default();
        batch.put_cf(store.cf(CF_META).unwrap(), stats_key(1), b"garbage");
        store.write(batch).unwrap();
        assert_eq!(Snapshots::open(&store, 9).unwrap().stats(&store, 1), None);
    }
}
