//! Bringing derived data up to date with the store.
//!
//! The lexical index is caught up on open: its last commit names the sequence number it holds,
//! and the change log after that is replayed (gaps are writes that failed or that a crash cut
//! short); if the log was trimmed past it, or the index is missing, newer than the store or
//! unreadable, it is rebuilt from the records.
//! A namespace's vector collections are built from the store the first time the namespace is
//! searched, its BM25 statistics the first time a text search or a write needs them
//! (`crate::deferred_stats`); both are then maintained by every write.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::store::StoreBatch;
use parking_lot::RwLock;

use crate::deferred_stats::DeferredStats;
use crate::error::{Error, Result};
use crate::heap_release::{release_freed_heap, LARGE_LOAD_RECORDS};
use crate::keys::{decode_vector_entry, Family};
use crate::lexical::index::LexicalOp;
use crate::lexical::LexicalStats;
use crate::namespace::NamespaceInfo;
use crate::snapshot::NamespaceSnapshot;
use crate::state::{Derived, Inner, NamespaceState};
use crate::store::{Change, ChangeEntry};
use crate::stored_vectors::StoredVectors;
use crate::vector::collection::{schedule_graph_build, SharedCollection, VectorCollection};
use crate::vector::source::VectorSource;

/// Records indexed per `apply` call during a rebuild.
const REBUILD_CHUNK: usize = 2048;

impl Inner {
    /// Brings the lexical index from its last commit (`committed`) to the store's sequence.
    pub(crate) fn catch_up_lexical(&self, committed: Option<u64>) -> Result<()> {
        let seq = self.sequencer.reserved().seq;
        let replay = match committed {
            Some(c) if c <= seq => {
                let changes = self.store.changes_after(c)?;
                let logged: Vec<u64> = changes.iter().map(|(s, _)| *s).collect();
                log_reaches_back(c, seq, &logged, self.store.changes_trimmed()?).then_some(changes)
            }
            _ => None,
        };
        match replay {
            Some(changes) => {
                if !changes.is_empty() {
                    tracing::info!("lexical index: replaying {} writes", changes.len());
                }
                for (_, entry) in changes {
                    self.replay(entry)?;
                }
            }
            None => self.rebuild_lexical()?,
        }
        self.commit_lexical()
    }

    fn namespaces_by_id(&self) -> HashMap<u32, NamespaceInfo> {
        self.catalog
            .read()
            .namespaces
            .values()
            .map(|ns| (ns.info.id, ns.info.clone()))
            .collect()
    }

    fn replay(&self, entry: ChangeEntry) -> Result<()> {
        let info = self.namespaces_by_id().remove(&entry.ns);
        let mut ops = Vec::with_capacity(entry.changes.len());
        for change in entry.changes {
            let op = match (change, &info) {
                (Change::Upsert(id), Some(info)) => match self.store.record(info.id, id)? {
                    Some(record) => LexicalOp::Upsert {
                        ns: info.id,
                        id,
                        analyzer: info.analyzer,
                        terms: info.analyzer.analyze(&record.text),
                        replaces: true,
                    },
                    None => LexicalOp::Delete { ns: entry.ns, id },
                },
                (Change::Upsert(id) | Change::Delete(id), _) => {
                    LexicalOp::Delete { ns: entry.ns, id }
                }
                (Change::DropNamespace, _) => LexicalOp::DropNamespace { ns: entry.ns },
            };
            ops.push(op);
        }
        self.lexical.apply(&ops);
        Ok(())
    }

    fn rebuild_lexical(&self) -> Result<()> {
        tracing::info!("lexical index: rebuilding from the store");
        self.lexical.clear()?;
        let mut total = 0usize;
        for info in self.namespaces_by_id().into_values() {
            let mut ops = Vec::with_capacity(REBUILD_CHUNK);
            for record in self.store.iter_records(info.id)? {
                let record = record?;
                ops.push(LexicalOp::Upsert {
                    ns: info.id,
                    id: record.id,
                    analyzer: info.analyzer,
                    terms: info.analyzer.analyze(&record.text),
                    replaces: false,
                });
                if ops.len() == REBUILD_CHUNK {
                    total += ops.len();
                    self.lexical.apply(&ops);
                    ops.clear();
                }
            }
            total += ops.len();
            self.lexical.apply(&ops);
        }
        tracing::info!("lexical index: rebuilt {total} records");
        Ok(())
    }

    /// The namespace's derived search state, built from the store on first use.
    pub(crate) fn derived(&self, ns: &Arc<NamespaceState>) -> Result<Arc<Derived>> {
        let derived = match ns.loaded() {
            Some(derived) => derived,
            None => self.load_derived(ns)?,
        };
        self.residency.touch(ns, || derived.heap_bytes());
        Ok(derived)
    }

    /// The vectors of namespace `ns` (of `records` records) by space, read in place from the
    /// store (one decode buffer, no allocation per vector, arenas sized once: this is most of
    /// a reopened namespace's first search when no vector file is exact).
    fn load_vectors(&self, ns: u32, records: usize) -> Result<HashMap<String, VectorCollection>> {
        let mut collections: HashMap<String, VectorCollection> = HashMap::new();
        let mut vector: Vec<f32> = Vec::new();
        self.store
            .for_each_in_namespace(Family::Vectors, ns, |key, value| {
                let corrupt = || Error::Corrupt {
                    what: "vector",
                    detail: format!("key {key:?}"),
                };
                let (id, space) =
                    decode_vector_entry(key, value, &mut vector).ok_or_else(corrupt)?;
                let collection = match collections.get_mut(space) {
                    Some(collection) => collection,
                    None => collections
                        .entry(space.to_string())
                        .or_insert_with(|| VectorCollection::with_capacity(vector.len(), records)),
                };
                if collection.dim() != vector.len() {
                    return Err(corrupt());
                }
                collection.upsert(id, &vector);
                Ok(())
            })?;
        Ok(collections)
    }

    /// Writes the statistics and vector collections of every namespace in memory as
    /// snapshots for the next open (the engine is closing: no write is in flight).
    pub(crate) fn write_snapshots(&self) -> Result<()> {
        let loaded = self.loaded_derived();
        let stats: Vec<_> = loaded
            .iter()
            .map(|(id, d)| (*id, d.lexical.get().map(|s| s.read()), d.vectors.read()))
            .collect();
        let collections: Vec<Vec<(&str, _)>> = stats
            .iter()
            .map(|(_, _, spaces)| spaces.iter().map(|(s, c)| (s.as_str(), c.read())).collect())
            .collect();
        let seq = self.sequencer.reserved().seq;
        self.snapshots.write(
            &self.store,
            seq,
            stats
                .iter()
                .zip(&collections)
                .map(|((ns, stats, _), spaces)| NamespaceSnapshot {
                    ns: *ns,
                    stats: stats.as_deref(),
                    vectors: spaces.iter().map(|(s, c)| (*s, &**c)).collect(),
                }),
        )
    }

    /// The namespace's BM25 statistics: its snapshot, or every record analysed again.
    pub(crate) fn load_stats(&self, ns: &NamespaceState) -> Result<LexicalStats> {
        if let Some(stats) = self.snapshots.stats(&self.store, ns.info.id) {
            return Ok(stats);
        }
        let mut stats = LexicalStats::default();
        for record in self.store.iter_records(ns.info.id)? {
            stats.add(&ns.info.analyzer.analyze(&record?.text));
        }
        Ok(stats)
    }

    /// The namespace's vector collections: its vector file, or every vector read again.
    fn load_collections(&self, ns: &NamespaceState) -> Result<HashMap<String, VectorCollection>> {
        let source_of = |space: &str| -> Arc<dyn VectorSource> {
            Arc::new(StoredVectors::new(&self.store, ns.info.id, space))
        };
        match self.snapshots.vectors(ns.info.id, &source_of) {
            Some(mut collections) => {
                // A graph kept in the file serves searches unless HNSW is now off for it.
                for c in collections.values_mut() {
                    c.fit_graph(&self.options.hnsw)?;
                }
                Ok(collections)
            }
            None => self.load_vectors(ns.info.id, ns.count.load(Ordering::SeqCst) as usize),
        }
    }

    /// Builds the derived state from the store, under the namespace's write lock so that no
    /// write lands between the scan and the installation.
    fn load_derived(&self, ns: &NamespaceState) -> Result<Arc<Derived>> {
        let _serialized = ns.write_lock.lock();
        if let Some(derived) = ns.loaded() {
            return Ok(derived);
        }
        // What earlier writes freed goes back first, so that large collections are not built
        // on top of it (`crate::heap_release`). The statistics wait for a text search or a
        // write that needs them (a vector search does not: see `crate::deferred_stats`).
        if ns.count.load(Ordering::SeqCst) as usize >= LARGE_LOAD_RECORDS {
            release_freed_heap();
        }
        let collections = self.load_collections(ns)?;
        let vectors: HashMap<String, SharedCollection> = collections
            .into_iter()
            .map(|(space, c)| (space, Arc::new(RwLock::new(c))))
            .collect();
        for c in vectors.values() {
            schedule_graph_build(c, self.options.hnsw);
        }
        let derived = Arc::new(Derived {
            lexical: DeferredStats::pending(),
            vectors: RwLock::new(vectors),
        });
        ns.install(derived.clone());
        Ok(derived)
    }

    /// Namespace `ns`'s statistics (`derived` is its state), loaded first if they are not yet;
    /// the namespace's resident bytes are then counted again, with them.
    pub(crate) fn stats<'a>(
        &self,
        ns: &Arc<NamespaceState>,
        derived: &'a Derived,
    ) -> Result<&'a RwLock<LexicalStats>> {
        if let Some(stats) = derived.lexical.get() {
            return Ok(stats);
        }
        let stats = derived.lexical.get_or_load(|| self.load_stats(ns))?;
        self.residency.touch(ns, || derived.heap_bytes());
        Ok(stats)
    }

    /// Adds the deletion of the snapshots to a write's `batch` ([`Snapshots::invalidate`]),
    /// first loading the statistics the write would make stale: those of `written` (the
    /// namespace written, when its state is loaded) and, while snapshots are on disk, those
    /// of every loaded namespace of `namespaces` (the catalog's).
    ///
    /// [`Snapshots::invalidate`]: crate::snapshot::Snapshots::invalidate
    pub(crate) fn invalidate_snapshots(
        &self,
        written: Option<&NamespaceState>,
        namespaces: &BTreeMap<String, Arc<NamespaceState>>,
        batch: &mut StoreBatch,
    ) -> Result<()> {
        let on_disk = self.snapshots.on_disk();
        let others = namespaces.values().filter(|_| on_disk).map(|ns| &**ns);
        for ns in written.into_iter().chain(others) {
            if let Some(derived) = ns.loaded() {
                derived.lexical.get_or_load(|| self.load_stats(ns))?;
            }
        }
        self.snapshots.invalidate(&self.store, batch)
    }
}

/// Whether the change log, holding the entries `logged` after the lexical index's commit at
/// `committed`, still has every write the index lacks, up to the store's `seq`. The log is
/// trimmed only through committed numbers and the store records how far (`trimmed`); a store
/// from before that was recorded had no gaps, so there the log must be whole.
fn log_reaches_back(committed: u64, seq: u64, logged: &[u64], trimmed: Option<u64>) -> bool {
    match trimmed {
        Some(trimmed) => trimmed <= committed,
        None => {
            logged.len() as u64 == seq - committed
                && logged
                    .iter()
                    .zip(committed + 1..)
                    .all(|(s, expected)| *s == expected)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::log_reaches_back;

    #[test]
    fn gaps_left_by_failed_writes_are_replayed_around() {
        // Writes 6 and 8 failed or were cut short by a crash; 5 is committed, the log trimmed
        // through 3 earlier.
        assert!(log_reaches_back(5, 9, &[7, 9], Some(3)));
        assert!(log_reaches_back(5, 5, &[], Some(5)));
    }

    #[test]
    fn a_log_trimmed_past_the_commit_calls_for_a_rebuild() {
        assert!(!log_reaches_back(5, 9, &[7, 8, 9], Some(7)));
    }

    #[test]
    fn a_store_without_a_trim_record_needs_a_whole_log() {
        assert!(log_reaches_back(5, 8, &[6, 7, 8], None));
        assert!(!log_reaches_back(5, 8, &[7, 8], None));
    }
}
