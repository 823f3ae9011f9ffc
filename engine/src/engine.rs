//! The [`Engine`]: the public entry point tying the store and the indexes together.
//!
//! # Visibility model
//! A write is acknowledged when its batch is in RocksDB's write-ahead log and applied to the
//! in-memory views of both indexes. Every read or search that *starts* after a write was
//! acknowledged sees that write (read-your-writes across threads); a search running
//! concurrently with a write may or may not see it, but never sees half of a batch's record.
//! Writes to one namespace are serialized; writes to different namespaces proceed in parallel
//! and only share a short critical section that assigns sequence numbers.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::batch::{Batch, WriteReceipt};
use crate::codec;
use crate::committer::Committer;
use crate::directory::prepare_directory;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::keys::{count_key, encode_u64, namespace_key, Family};
use crate::namespace::{validate_name, NamespaceInfo, NamespaceOptions};
use crate::opening;
use crate::options::EngineOptions;
use crate::record::{NewRecord, Record, RecordId};
use crate::residency::{Residency, ResidentState};
use crate::sequencer::Sequencer;
use crate::space::Space;
use crate::state::{Inner, NamespaceState};
use crate::store::StoreBatch;
use crate::transfer::{ExportEntry, TransferCounts};
use crate::vector::collection::{wait_for_graph_build, SharedCollection};

/// An embedded memory store: records in namespaces, BM25 and vector search over them.
///
/// `Engine` is `Send + Sync`; share it between threads with an `Arc`. See the crate
/// documentation for an example and the module documentation for the visibility model.
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
    committer: Option<Committer>,
}

impl Engine {
    /// Opens the engine directory at `path`, creating it if allowed, and brings the indexes up
    /// to date with the store (replaying or rebuilding as needed).
    ///
    /// An existing store is opened read-only first, which is enough for every read; its
    /// read-write handle opens in the background shortly after (at once if a write asks for
    /// it, which then waits for it). If that open fails, reads go on and writes return why.
    ///
    /// A directory of format 1 is upgraded to [`crate::ENGINE_FORMAT`] first, which rewrites
    /// its store's small values once (a few seconds for a million records); the upgraded
    /// directory no longer opens with a build of format 1.
    ///
    /// Errors: [`Error::NotAnEngine`] for a directory that holds something else,
    /// [`Error::IncompatibleFormat`] for another on-disk format, [`Error::Missing`] when the
    /// directory does not exist and `create_if_missing` is off.
    pub fn open(path: impl AsRef<Path>, options: EngineOptions) -> Result<Engine> {
        let path = path.as_ref().to_path_buf();
        let format = prepare_directory(&path, options.create_if_missing)?;
        let mut opened = opening::open(&path, format, &options)?;
        // Everything is open: the statistics snapshots now have the cores to themselves.
        opened.snapshots.start_decoding(&opened.store);
        let options_budget = options.derived_memory_budget;
        let inner = Arc::new(Inner {
            path,
            ef_search: AtomicUsize::new(options.hnsw.ef_search),
            options,
            store: opened.store,
            attributes: opened.attributes,
            lexical: opened.lexical.index,
            catalog: RwLock::new(opened.catalog),
            sequencer: Sequencer::new(opened.counters),
            residency: Residency::new(options_budget),
            snapshots: opened.snapshots,
        });
        inner.catch_up_lexical(opened.lexical.committed_seq)?;
        let committing = Arc::clone(&inner);
        let committer = Committer::start(inner.options.lexical_commit_interval, move || {
            committing.commit_lexical()
        })?;
        Ok(Engine {
            inner,
            committer: Some(committer),
        })
    }

    /// The engine directory.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The sequence number through which every write is acknowledged (or failed); writes to
    /// other namespaces numbered after it may be acknowledged too.
    pub fn last_seq(&self) -> u64 {
        self.inner.sequencer.finished_through()
    }

    /// Makes everything written so far durable on disk (write-ahead log synced, lexical index
    /// committed) and waits for background vector-index builds to finish.
    pub fn flush(&self) -> Result<()> {
        self.inner.store.sync()?;
        self.inner.commit_lexical()?;
        for (_, derived) in self.inner.loaded_derived() {
            let collections: Vec<SharedCollection> =
                derived.vectors.read().values().cloned().collect();
            for c in &collections {
                wait_for_graph_build(c);
            }
        }
        Ok(())
    }

    /// Flushes, then merges the lexical index's segments into one. Meant for after a bulk
    /// load: BM25 search prunes per segment, so one segment answers sooner than many (a
    /// million records: see `docs/benchmarks.md`). Takes seconds per million records. Searches
    /// go on meanwhile, and so do writes until enough of them call for a lexical commit, which
    /// waits for the merge; later commits add segments again.
    pub fn merge_lexical_segments(&self) -> Result<()> {
        self.flush()?;
        self.inner.lexical.merge_segments()
    }

    /// Flushes and closes the engine, reporting any error (dropping the engine does the same
    /// but can only log errors).
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        if let Some(committer) = self.committer.take() {
            committer.stop();
            // Graphs live in memory only: a build the engine would throw away is stopped.
            for (_, derived) in self.inner.loaded_derived() {
                derived.stop_graph_builds();
            }
            self.flush()?;
            self.inner.write_snapshots()?;
            self.inner.store.flush_memtables()?;
            self.wait_for_stopped_loads();
        }
        Ok(())
    }

    /// Waits (a few milliseconds at most) for the background loads of evicted namespaces,
    /// stopped but not joined, to let go of the store, so that RocksDB closes and the
    /// directory is unlocked when the engine is gone, not a batch later.
    fn wait_for_stopped_loads(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while Arc::strong_count(&self.inner.store) > 1 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    // ----- namespaces -------------------------------------------------------------------

    /// Creates a namespace. Errors with [`Error::NamespaceExists`] if the name is taken.
    pub fn create_namespace(&self, name: &str, options: NamespaceOptions) -> Result<NamespaceInfo> {
        validate_name(name)?;
        let mut catalog = self.inner.catalog.write();
        if catalog.namespaces.contains_key(name) {
            return Err(Error::NamespaceExists(name.to_string()));
        }
        let (id, counters) = self.inner.sequencer.reserve_namespace();
        let info = NamespaceInfo {
            name: name.to_string(),
            id,
            analyzer: options.analyzer,
        };
        let store = &self.inner.store;
        let meta = store.cf(Family::Meta)?;
        let mut batch = StoreBatch::default();
        batch.put(
            meta,
            namespace_key(name),
            codec::encode("namespace", &info)?,
        );
        batch.put(meta, count_key(info.id), encode_u64(0));
        store.put_counters(&mut batch, &counters)?;
        store.write(batch)?;
        catalog.namespaces.insert(
            name.to_string(),
            Arc::new(NamespaceState::new(info.clone(), 0)),
        );
        Ok(info)
    }

    /// Returns the namespace, creating it with `options` if it does not exist. An existing
    /// namespace keeps its own options.
    pub fn ensure_namespace(&self, name: &str, options: NamespaceOptions) -> Result<NamespaceInfo> {
        match self.create_namespace(name, options) {
            Err(Error::NamespaceExists(_)) => self.namespace(name),
            other => other,
        }
    }

    /// Information about one namespace.
    pub fn namespace(&self, name: &str) -> Result<NamespaceInfo> {
        Ok(self.inner.namespace(name)?.info.clone())
    }

    /// Every namespace, sorted by name.
    pub fn namespaces(&self) -> Vec<NamespaceInfo> {
        self.namespaces_under("")
    }

    /// The namespaces whose names start with `prefix`, sorted by name: one range of the
    /// catalog, so a service with many tenants lists one user's namespaces without reading
    /// everyone's.
    pub fn namespaces_under(&self, prefix: &str) -> Vec<NamespaceInfo> {
        use std::ops::Bound;
        self.inner
            .catalog
            .read()
            .namespaces
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(|(name, _)| name.starts_with(prefix))
            .map(|(_, ns)| ns.info.clone())
            .collect()
    }

    /// Number of records in a namespace.
    pub fn count(&self, namespace: &str) -> Result<u64> {
        Ok(self
            .inner
            .namespace(namespace)?
            .count
            .load(Ordering::SeqCst))
    }

    /// What derived search state is in memory: namespaces, estimated bytes, and evictions
    /// so far (see [`EngineOptions::derived_memory_budget`](crate::EngineOptions)).
    pub fn resident(&self) -> ResidentState {
        let loaded = self.inner.loaded_derived();
        ResidentState {
            namespaces: loaded.len(),
            bytes: loaded.iter().map(|(_, d)| d.heap_bytes()).sum(),
            evictions: self.inner.residency.evictions(),
        }
    }

    /// Deletes a namespace with all its records, vectors and state.
    pub fn drop_namespace(&self, name: &str) -> Result<()> {
        self.inner.drop_namespace(name)
    }

    /// Copies every record (same ids), vector and state value of namespace `from` into a new
    /// namespace `to` with the same analyzer, so that work done on the copy leaves `from`
    /// untouched. Crash-safe: after a crash the copy either exists whole or not at all.
    /// Writes to `from` wait until the copy is done. Errors with [`Error::NamespaceExists`]
    /// if `to` exists and [`Error::UnknownNamespace`] if `from` does not.
    pub fn copy_namespace(&self, from: &str, to: &str) -> Result<NamespaceInfo> {
        self.inner.copy_namespace(from, to)
    }

    /// A content hash (SHA-256, hex) of every record, vector and state value of a namespace as
    /// stored: two namespaces, or one namespace at two moments, with equal digests hold the
    /// same memory. Independent of the namespace's name and id.
    pub fn digest(&self, namespace: &str) -> Result<String> {
        let ns = self.inner.namespace(namespace)?;
        self.inner.digest(&ns)
    }

    /// Gives every entry of a namespace to `sink` in export order (header, spaces, records,
    /// vectors, state; see [`ExportEntry`]), as one consistent moment: writes to the namespace
    /// wait until the export is done. [`Engine::import_namespace`] stores the entries in
    /// another engine, which is how a tenant's memory moves between machines. A failing sink
    /// stops the export with [`Error::ExportSink`].
    pub fn export_namespace(
        &self,
        namespace: &str,
        mut sink: impl FnMut(ExportEntry) -> std::io::Result<()>,
    ) -> Result<TransferCounts> {
        self.inner.export_namespace(namespace, &mut sink)
    }

    /// Stores an exported namespace under the name its header gives, with the same record
    /// ids, creation times, vectors and state, so that the memory systems' state still names
    /// its records and [`Engine::digest`] equals the exporter's. Crash-safe and all or
    /// nothing: a bad entry ([`Error::InvalidImport`], numbered from 1 for the header) or a
    /// crash leaves no namespace. Errors with [`Error::NamespaceExists`] if the name is taken.
    pub fn import_namespace(
        &self,
        entries: impl IntoIterator<Item = Result<ExportEntry>>,
    ) -> Result<(NamespaceInfo, TransferCounts)> {
        self.inner.import_namespace(&mut entries.into_iter())
    }

    // ----- embedding spaces -------------------------------------------------------------

    /// Declares an embedding space. Idempotent for the same dimension; a different dimension
    /// is [`Error::SpaceConflict`].
    pub fn create_space(&self, space: Space) -> Result<Space> {
        self.inner.create_space(space)
    }

    /// Every embedding space, sorted by name.
    pub fn spaces(&self) -> Vec<Space> {
        let mut all: Vec<Space> = self.inner.catalog.read().spaces.values().cloned().collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// The embedding space called `name`, if it has been created: its dimension, say, for a
    /// caller that must build a query vector of the right length.
    pub fn space(&self, name: &str) -> Option<Space> {
        self.inner.space(name).ok()
    }

    // ----- writes -----------------------------------------------------------------------

    /// Applies a batch atomically to a namespace.
    pub fn write(&self, namespace: &str, batch: Batch) -> Result<WriteReceipt> {
        let ns = self.inner.namespace(namespace)?;
        self.inner.write(&ns, batch)
    }

    /// Stores one record and returns its id.
    pub fn put(&self, namespace: &str, record: NewRecord) -> Result<RecordId> {
        let mut batch = Batch::new();
        batch.put(record);
        let receipt = self.write(namespace, batch)?;
        receipt
            .ids
            .first()
            .copied()
            .ok_or_else(|| Error::Background("write acknowledged without an id".into()))
    }

    /// Stores many records atomically and returns their ids in order.
    pub fn put_many(
        &self,
        namespace: &str,
        records: impl IntoIterator<Item = NewRecord>,
    ) -> Result<Vec<RecordId>> {
        let mut batch = Batch::new();
        for r in records {
            batch.put(r);
        }
        Ok(self.write(namespace, batch)?.ids)
    }

    /// Replaces an existing record; [`Error::RecordNotFound`] if it does not exist.
    pub fn update(&self, namespace: &str, id: RecordId, record: NewRecord) -> Result<()> {
        let mut batch = Batch::new();
        batch.update(id, record);
        self.write(namespace, batch).map(|_| ())
    }

    /// Deletes a record; returns whether it existed.
    pub fn delete(&self, namespace: &str, id: RecordId) -> Result<bool> {
        let mut batch = Batch::new();
        batch.delete(id);
        Ok(self.write(namespace, batch)?.deleted == 1)
    }

    /// Deletes every record whose attributes `filter` matches (an empty filter matches every
    /// record), in one atomic write; returns how many were deleted. Their vectors, postings
    /// and statistics go with them, as with [`Engine::delete`].
    pub fn delete_where(&self, namespace: &str, filter: &Filter) -> Result<usize> {
        let ns = self.inner.namespace(namespace)?;
        Ok(self.inner.delete_where(&ns, filter)?.deleted)
    }

    /// Stores a value in the namespace's free-form state (see [`Batch::put_state`]).
    pub fn put_state<T: Serialize>(&self, namespace: &str, key: &str, value: &T) -> Result<()> {
        let mut batch = Batch::new();
        batch.put_state(key, value)?;
        self.write(namespace, batch).map(|_| ())
    }

    /// Removes a key from the namespace's free-form state.
    pub fn delete_state(&self, namespace: &str, key: &str) -> Result<()> {
        let mut batch = Batch::new();
        batch.delete_state(key);
        self.write(namespace, batch).map(|_| ())
    }

    // ----- reads ------------------------------------------------------------------------

    /// One record by id.
    pub fn get(&self, namespace: &str, id: RecordId) -> Result<Option<Record>> {
        let ns = self.inner.namespace(namespace)?;
        self.inner.store.record(ns.info.id, id)
    }

    /// The vectors of one record, `(space, vector)` as stored (normalized), by space name; empty
    /// when it has none or does not exist. For recomputing something derived from a record's
    /// embedding without embedding its text again.
    pub fn get_vectors(&self, namespace: &str, id: RecordId) -> Result<Vec<(String, Vec<f32>)>> {
        let ns = self.inner.namespace(namespace)?;
        self.inner.store.vectors_of(ns.info.id, id)
    }

    /// Iterates a namespace's records in insertion order, reading them lazily from the store.
    pub fn records(&self, namespace: &str) -> Result<impl Iterator<Item = Result<Record>> + '_> {
        let ns = self.inner.namespace(namespace)?;
        self.inner.store.iter_records(ns.info.id)
    }

    /// A value from the namespace's free-form state.
    pub fn get_state<T: DeserializeOwned>(&self, namespace: &str, key: &str) -> Result<Option<T>> {
        let ns = self.inner.namespace(namespace)?;
        self.inner
            .store
            .state(ns.info.id, key)?
            .map(|b| codec::decode("namespace state", &b))
            .transpose()
    }

    /// Keys of the namespace's free-form state that start with `prefix`, sorted.
    pub fn state_keys(&self, namespace: &str, prefix: &str) -> Result<Vec<String>> {
        let ns = self.inner.namespace(namespace)?;
        self.inner.store.state_keys(ns.info.id, prefix)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::error!("closing the memory engine: {e}");
        }
    }
}
