//! Namespace copies: every record, vector and state value of one namespace written into a new
//! namespace, so that a caller can change the copy (add a corpus, answer questions that warm a
//! memory) and drop it, leaving the original exactly as it was.
//!
//! A copy is staged, then published. Staging reserves a namespace id, marks it as staged in
//! the meta family, and writes the source's stored bytes under the new id in atomic batches of
//! [`COPY_CHUNK`] entries; nothing of it is visible, since no catalog entry names the id.
//! Publishing writes the catalog entry, the record count and one change-log entry listing
//! every copied record, and clears the staged mark, in one atomic batch; the lexical index is
//! then derived from it as from any write (and caught up from the change log after a crash),
//! and the copy's BM25 statistics and vector collections are built from the store on first
//! search. A crash before publishing leaves only a staged mark and unreachable data, which
//! opening the engine removes. Record ids, creation times and sequence numbers are kept, so
//! ids a memory system keeps in its state name the same records in the copy; records written
//! to the copy later get fresh ids from the engine-wide counter, never one of the copied ones.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::codec;
use crate::error::{Error, Result};
use crate::keys::*;
use crate::lexical::index::LexicalOp;
use crate::namespace::{validate_name, Analyzer, NamespaceInfo};
use crate::record::{Record, RecordId};
use crate::state::{Inner, NamespaceState};
use crate::store::{Change, ChangeEntry, Store, StoreBatch};

/// Entries (records, vectors or state values) written per staging batch.
pub(crate) const COPY_CHUNK: usize = 1024;

/// The families holding what is stored of a namespace, keyed by the namespace id first.
const STORED_FAMILIES: [Family; 3] = [Family::Records, Family::Vectors, Family::State];

/// Every family holding a namespace's entries: what is stored, and its attribute index (whose
/// keys do not depend on the namespace id, so a copy copies them; they depend on the store's
/// salt, so a digest, which two stores compare, leaves them out).
const NAMESPACE_FAMILIES: [Family; 4] = [
    Family::Records,
    Family::Vectors,
    Family::State,
    Family::Attributes,
];

/// What staging wrote: the records' ids and their lexical index entries (a copy's, or an
/// import's).
#[derive(Default)]
pub(crate) struct Staged {
    pub(crate) ids: Vec<RecordId>,
    pub(crate) lexical: Vec<LexicalOp>,
}

impl Staged {
    /// Counts `record` as staged into `ns`, with the lexical entry publishing will apply.
    pub(crate) fn add(&mut self, ns: &NamespaceInfo, record: &Record) {
        self.ids.push(record.id);
        self.lexical.push(LexicalOp::Upsert {
            ns: ns.id,
            id: record.id,
            analyzer: ns.analyzer,
            terms: ns.analyzer.analyze(&record.text),
            replaces: false,
        });
    }
}

impl Inner {
    /// Copies namespace `from` into a new namespace `to` (see the module documentation).
    pub(crate) fn copy_namespace(&self, from: &str, to: &str) -> Result<NamespaceInfo> {
        validate_name(to)?;
        let source = self.namespace(from)?;
        if self.catalog.read().namespaces.contains_key(to) {
            return Err(Error::NamespaceExists(to.to_string()));
        }
        // No write reaches the source while it is copied.
        let _source_writes = source.write_lock.lock();
        if source.dropped.load(Ordering::SeqCst) {
            return Err(Error::UnknownNamespace(from.to_string()));
        }
        let info = self.reserve_staged(to, source.info.analyzer)?;
        let copied = self
            .stage_copy(&source.info, &info)
            .and_then(|staged| self.publish_staged(&info, staged, None));
        if copied.is_err() {
            if let Err(e) = discard_staged(&self.store, info.id) {
                tracing::warn!("discarding the unfinished copy {to:?}: {e} (removed on reopen)");
            }
        }
        copied.map(|()| info)
    }

    /// Assigns a namespace being staged (a copy or an import) its id and marks it as staged.
    pub(crate) fn reserve_staged(&self, name: &str, analyzer: Analyzer) -> Result<NamespaceInfo> {
        let (id, counters) = self.sequencer.reserve_namespace();
        let info = NamespaceInfo {
            name: name.to_string(),
            id,
            analyzer,
        };
        let mut batch = StoreBatch::default();
        batch.put(
            self.store.cf(Family::Meta)?,
            staged_copy_key(info.id),
            codec::encode("namespace", &info)?,
        );
        self.store.put_counters(&mut batch, &counters)?;
        self.store.write(batch)?;
        Ok(info)
    }

    /// Writes the source's records, vectors and state under the copy's id.
    fn stage_copy(&self, source: &NamespaceInfo, copy: &NamespaceInfo) -> Result<Staged> {
        let mut staged = Staged {
            ids: Vec::new(),
            lexical: Vec::new(),
        };
        for family in NAMESPACE_FAMILIES {
            let cf = self.store.cf(family)?;
            let mut batch = StoreBatch::default();
            for item in self.store.iter_namespace_raw(family, source.id)? {
                let (key, value) = item?;
                if family == Family::Records {
                    let record: Record = codec::decode("record", &value)?;
                    staged.add(copy, &record);
                }
                let suffix = key.get(4..).unwrap_or_default();
                batch.put(cf, [&ns_prefix(copy.id)[..], suffix].concat(), value);
                if batch.len() >= COPY_CHUNK {
                    self.store.write(std::mem::take(&mut batch))?;
                }
            }
            if !batch.is_empty() {
                self.store.write(batch)?;
            }
        }
        Ok(staged)
    }

    /// Makes a staged namespace a namespace, in one atomic write, and indexes it. An import
    /// passes the first record id past its records (`next_record`), which the engine-wide
    /// counter is raised to, so that later writes never reuse an imported id.
    pub(crate) fn publish_staged(
        &self,
        info: &NamespaceInfo,
        staged: Staged,
        next_record: Option<u64>,
    ) -> Result<()> {
        let mut catalog = self.catalog.write();
        if catalog.namespaces.contains_key(&info.name) {
            return Err(Error::NamespaceExists(info.name.clone()));
        }
        if let Some(next) = next_record {
            self.sequencer.raise_next_record(next);
        }
        let ticket = self.sequencer.reserve(0);
        let count = staged.ids.len() as u64;
        let meta = self.store.cf(Family::Meta)?;
        let mut batch = StoreBatch::default();
        batch.put(
            meta,
            namespace_key(&info.name),
            codec::encode("namespace", info)?,
        );
        batch.put(meta, count_key(info.id), encode_u64(count));
        batch.delete(meta, staged_copy_key(info.id));
        let entry = ChangeEntry {
            ns: info.id,
            changes: staged.ids.into_iter().map(Change::Upsert).collect(),
        };
        self.store
            .log_change(&mut batch, &ticket.counters, &entry)?;
        self.store.write(batch)?;
        ticket.finish(|| self.lexical.apply(&staged.lexical));
        catalog.namespaces.insert(
            info.name.clone(),
            Arc::new(NamespaceState::new(info.clone(), count)),
        );
        Ok(())
    }

    /// SHA-256 of every record, vector and state value of a namespace as stored (keys without
    /// the namespace id), in key order.
    pub(crate) fn digest(&self, ns: &NamespaceState) -> Result<String> {
        let _no_writes = ns.write_lock.lock();
        let mut hash = Sha256::new();
        for family in STORED_FAMILIES {
            hash.update(family.name().as_bytes());
            for item in self.store.iter_namespace_raw(family, ns.info.id)? {
                let (key, value) = item?;
                let suffix = key.get(4..).unwrap_or_default();
                for part in [suffix, &value[..]] {
                    hash.update((part.len() as u64).to_le_bytes());
                    hash.update(part);
                }
            }
        }
        Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// Removes every copy a crash left staged (called on open, before the catalog is read).
pub(crate) fn discard_staged_copies(store: &Store) -> Result<()> {
    for (key, _) in store.scan_prefix(Family::Meta, META_STAGED_COPY_PREFIX)? {
        let id = namespace_after(META_STAGED_COPY_PREFIX, &key).ok_or_else(|| Error::Corrupt {
            what: "staged copy",
            detail: format!("key {key:?}"),
        })?;
        tracing::info!("removing the unfinished copy of namespace id {id}");
        discard_staged(store, id)?;
    }
    Ok(())
}

/// Deletes the data staged under namespace id `id` and its staged mark, atomically.
pub(crate) fn discard_staged(store: &Store, id: u32) -> Result<()> {
    let mut batch = StoreBatch::default();
    for family in NAMESPACE_FAMILIES {
        batch.delete_range(store.cf(family)?, ns_prefix(id), ns_end(id));
    }
    batch.delete(store.cf(Family::Meta)?, staged_copy_key(id));
    store.write(batch)
}
