//! Snapshots of the namespaces' derived search state, written when the engine closes, so that
//! the first search after a reopen reads them instead of rebuilding from every record: the
//! BM25 statistics (one META value per namespace, instead of re-analysing every text) and the
//! vector collections (one file per namespace in `vectors/`, see [`crate::vector::file`],
//! instead of decoding every stored vector).
//!
//! A snapshot is exact or absent:
//! - All are written at close, with the sequence number the store had then: vector files
//!   first (each names the number in its header), then the statistics and the number
//!   ([`META_STATS_SEQ`]) in one batch. At open they are kept only if the store's sequence
//!   number is still that one; otherwise something wrote after them (a process that never
//!   closed) and they are deleted.
//! - During a session, the first write that changes records (in any namespace) deletes the
//!   statistics in its own batch, atomically with its change, and the vector files right
//!   after (a file left by a crash in between names an older number than the store's, so it
//!   is never read, and the next open deletes it). So no snapshot ever describes records that
//!   have changed, and a deleted record's terms never outlive it in one (the deletion
//!   guarantee of `docs/service.md`). Namespaces whose state is in memory at close are
//!   written again then.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::store::StoreBatch;
use parking_lot::Mutex;
use rustc_hash::FxHashSet;

use crate::error::{Error, Result};
use crate::keys::{
    decode_u64, encode_u64, namespace_after, prefix_end, stats_key, Family, META_STATS_PREFIX,
    META_STATS_SEQ,
};
use crate::lexical::LexicalStats;
use crate::store::Store;
use crate::vector::collection::VectorCollection;
use crate::vector::file;
use crate::warmup::{StatsBytes, Warmup};

/// Whether snapshots are on disk, and their reading and writing.
pub(crate) struct Snapshots {
    on_disk: AtomicBool,
    /// The sequence number the snapshots on disk were written at.
    seq: AtomicU64,
    /// The directory of the vector files.
    vectors_dir: PathBuf,
    /// Whether vector files are written and read ([`crate::EngineOptions::vector_snapshots`]).
    with_vectors: bool,
    /// The statistics decoded while the engine opened.
    warmup: Warmup,
    /// The namespaces whose statistics were read from their snapshot: while nothing is written,
    /// a close need not write them again.
    served: Mutex<FxHashSet<u32>>,
}

/// One namespace's derived state as [`Snapshots::write`] takes it.
pub(crate) struct NamespaceSnapshot<'a> {
    pub(crate) ns: u32,
    /// `None` when they were never loaded: a snapshot still on disk stays exact for them, and
    /// one deleted since is not written again.
    pub(crate) stats: Option<&'a LexicalStats>,
    /// The vector collections by space.
    pub(crate) vectors: Vec<(&'a str, &'a VectorCollection)>,
}

impl Snapshots {
    /// The snapshots of a store whose sequence number is `seq`, with vector files in
    /// `vectors_dir` (`with_vectors`): kept when they were written at that number, deleted
    /// otherwise (vector files also when they are not wanted). Kept statistics are decoded
    /// ahead once [`Snapshots::start_decoding`] is called, those that fit `stats_budget` bytes.
    pub(crate) fn open(
        store: &Arc<Store>,
        seq: u64,
        vectors_dir: PathBuf,
        with_vectors: bool,
        stats_budget: Option<usize>,
    ) -> Result<Snapshots> {
        let warmup = Warmup::new(stats_budget);
        let written_at = store.get(Family::Meta, META_STATS_SEQ)?;
        let exact = written_at.as_deref().and_then(decode_u64) == Some(seq);
        if written_at.is_some() && !exact {
            let mut batch = StoreBatch::default();
            delete_all(store, &mut batch)?;
            store.write(batch)?;
        }
        if !exact || !with_vectors {
            remove_vector_files(&vectors_dir)?;
        }
        Ok(Snapshots {
            on_disk: AtomicBool::new(exact),
            seq: AtomicU64::new(seq),
            vectors_dir,
            with_vectors,
            warmup,
            served: Mutex::default(),
        })
    }

    /// Starts decoding the statistics snapshots kept at the open on a thread of their own
    /// ([`crate::warmup`]). The engine calls it once the rest of its open is done, so that the
    /// decoding does not compete with it for the cores.
    pub(crate) fn start_decoding(&mut self, store: &Arc<Store>) {
        if self.on_disk.load(Ordering::SeqCst) {
            let store = Arc::clone(store);
            self.warmup.warm_stats(move || stats_snapshots(&store));
        }
    }

    /// Namespace `ns`'s statistics as they were at the last close, if no write has changed
    /// any record since, as the warm-up decoded them if it did. A snapshot that does not
    /// decode is ignored (the caller rebuilds).
    pub(crate) fn stats(&self, store: &Store, ns: u32) -> Option<LexicalStats> {
        if !self.on_disk.load(Ordering::SeqCst) {
            return None;
        }
        let decoded = match self.warmup.take_stats(ns) {
            Some(decoded) => decoded,
            None => read_stats(store, ns)?,
        };
        match &decoded {
            Some(_) => {
                self.served.lock().insert(ns);
            }
            None => {
                tracing::warn!("statistics snapshot of namespace {ns} does not decode; rebuilding")
            }
        }
        decoded
    }

    /// Namespace `ns`'s vector collections by space as they were at the last close, if no
    /// write has changed any record since, their vectors mapped from the file (or, for the
    /// points of a graph, read from `source_of`'s store). A file that is missing is ignored,
    /// and one that is damaged or of another format deleted, so that the next close writes it
    /// again (the caller reads the vectors from the store).
    pub(crate) fn vectors(
        &self,
        ns: u32,
        source_of: file::SourceOf<'_>,
    ) -> Option<HashMap<String, VectorCollection>> {
        if !self.with_vectors || !self.on_disk.load(Ordering::SeqCst) {
            return None;
        }
        let path = self.vector_file(ns);
        let seq = self.seq.load(Ordering::SeqCst);
        if !path.exists() {
            return None;
        }
        match file::decode(&path, seq) {
            Ok(Some(decoded)) => Some(decoded.attach(source_of)),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!("{e}; reading the vectors from the store");
                if let Err(e) = std::fs::remove_file(&path) {
                    tracing::warn!("cannot delete {}: {e}", path.display());
                }
                None
            }
        }
    }

    /// Whether snapshots written at the last close are still exact (no write since).
    pub(crate) fn on_disk(&self) -> bool {
        self.on_disk.load(Ordering::SeqCst)
    }

    /// Adds the deletion of every statistics snapshot to a write's batch, while any may
    /// exist; call [`Snapshots::invalidated`] once the batch is written.
    pub(crate) fn invalidate(&self, store: &Store, batch: &mut StoreBatch) -> Result<()> {
        if self.on_disk.load(Ordering::SeqCst) {
            delete_all(store, batch)?;
        }
        Ok(())
    }

    /// Notes that a batch from [`Snapshots::invalidate`] was written, and deletes the vector
    /// files: none is left. (Its write is done, so a file that cannot be deleted is only
    /// reported: it names an older sequence number than any later close, so it is never read,
    /// and the next open deletes it.)
    pub(crate) fn invalidated(&self) {
        if self.on_disk.swap(false, Ordering::SeqCst) {
            self.warmup.discard();
            if let Err(e) = remove_vector_files(&self.vectors_dir) {
                tracing::warn!("{e}; the stale vector files are deleted at the next open");
            }
        }
    }

    /// Writes `namespaces`' state at the store's sequence number `seq`, when the engine
    /// closes and nothing writes any more.
    pub(crate) fn write<'a>(
        &self,
        store: &Store,
        seq: u64,
        namespaces: impl IntoIterator<Item = NamespaceSnapshot<'a>>,
    ) -> Result<()> {
        let kept = self.on_disk.load(Ordering::SeqCst);
        // Nothing was written since the snapshots on disk: those are exact, and the close
        // writes only the statistics that were not read from them (rebuilt instead). A session
        // that only read so never opens the store for writing (see `store::instances`).
        let unchanged = kept && self.seq.load(Ordering::SeqCst) == seq;
        let served = self.served.lock();
        let mut stats_puts = Vec::new();
        let mut wrote_files = false;
        for snapshot in namespaces {
            if let Some(stats) = snapshot.stats {
                if !(unchanged && served.contains(&snapshot.ns)) {
                    stats_puts.push((stats_key(snapshot.ns), stats.to_bytes()));
                }
            }
            let path = self.vector_file(snapshot.ns);
            // A file still on disk holds these records as they were read or written at this
            // number; it is written again only if a graph was built or grown since.
            let graph_unsaved = snapshot.vectors.iter().any(|(_, c)| c.graph_unsaved());
            if self.with_vectors && !(kept && path.exists() && !graph_unsaved) {
                std::fs::create_dir_all(&self.vectors_dir)
                    .map_err(|e| Error::io(&self.vectors_dir, e))?;
                file::write(&path, seq, &snapshot.vectors)?;
                snapshot.vectors.iter().for_each(|(_, c)| c.graph_saved());
                wrote_files = true;
            }
        }
        if stats_puts.is_empty() && !wrote_files && (unchanged || !kept) {
            return Ok(());
        }
        sync_dir(&self.vectors_dir)?;
        let meta = store.cf(Family::Meta)?;
        let mut batch = StoreBatch::default();
        for (key, bytes) in stats_puts {
            batch.put(meta, key, bytes);
        }
        batch.put(meta, META_STATS_SEQ, encode_u64(seq));
        store.write(batch)?;
        self.seq.store(seq, Ordering::SeqCst);
        self.on_disk.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn vector_file(&self, ns: u32) -> PathBuf {
        self.vectors_dir.join(format!("{ns}.vec"))
    }
}

/// Namespace `ns`'s statistics snapshot read from the store: `None` if there is none (or
/// it cannot be read), `Some(None)` if it does not decode.
fn read_stats(store: &Store, ns: u32) -> Option<Option<LexicalStats>> {
    let bytes = match store.get(Family::Meta, &stats_key(ns)) {
        Ok(bytes) => bytes?,
        Err(e) => {
            tracing::warn!("statistics snapshot of namespace {ns}: {e}; rebuilding");
            return None;
        }
    };
    Some(LexicalStats::from_bytes(&bytes))
}

/// Every statistics snapshot in the store: (namespace, bytes).
fn stats_snapshots(store: &Store) -> Result<Vec<StatsBytes>> {
    let mut snapshots = Vec::new();
    for (key, value) in store.scan_prefix(Family::Meta, META_STATS_PREFIX)? {
        let ns = namespace_after(META_STATS_PREFIX, &key).ok_or_else(|| Error::Corrupt {
            what: "statistics snapshot",
            detail: format!("key {key:?}"),
        })?;
        snapshots.push((ns, value.into_vec()));
    }
    Ok(snapshots)
}

/// Adds the deletion of every statistics snapshot and of their sequence number to `batch`.
fn delete_all(store: &Store, batch: &mut StoreBatch) -> Result<()> {
    let meta = store.cf(Family::Meta)?;
    batch.delete_range(meta, META_STATS_PREFIX, prefix_end(META_STATS_PREFIX));
    batch.delete(meta, META_STATS_SEQ);
    Ok(())
}

/// Deletes the directory of vector files, if there is one.
fn remove_vector_files(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(dir, e)),
        _ => Ok(()),
    }
}

/// Makes the vector files' names durable before the statistics that vouch for them.
fn sync_dir(dir: &Path) -> Result<()> {
    match std::fs::File::open(dir) {
        Ok(handle) => handle.sync_all().map_err(|e| Error::io(dir, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(dir, e)),
    }
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
