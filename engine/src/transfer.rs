//! Namespace exports and imports: one namespace as a stream of portable entries, and such a
//! stream stored in another engine, so that a namespace (a tenant's memory) can move between
//! machines.
//!
//! An export is, in order: one [`ExportEntry::Namespace`] header (name, analyzer, formats),
//! the embedding spaces its vectors are in, every record as stored (ids, creation times and
//! sequence numbers kept), every vector as stored (already normalized), and every state value
//! as its stored bytes. It is taken under the namespace's write lock, so it is one consistent
//! moment of the namespace.
//!
//! An import keeps the record ids: memory systems name records by id in their state (Mem0's
//! history, A-Mem's links, MemoryOS's pages), so the imported memory behaves exactly as the
//! exported one, and its [`crate::Engine::digest`] is the same. Record keys are (namespace id,
//! record id), so ids need only be unique within the namespace; the engine-wide counter is
//! raised past the largest imported id, so later writes never reuse one. Like a copy
//! (`copy.rs`), an import is staged under a reserved namespace id and published in one atomic
//! write: a failed entry or a crash leaves nothing visible (a crash's staged data is removed
//! on reopen).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use crate::codec::{self, VALUE_FORMAT};
use crate::copy::{discard_staged, Staged, COPY_CHUNK};
use crate::directory::ENGINE_FORMAT;
use crate::error::{Error, Result};
use crate::keys::*;
use crate::namespace::{validate_name, Analyzer, NamespaceInfo};
use crate::record::{Record, RecordId};
use crate::space::Space;
use crate::state::Inner;
use crate::store::StoreBatch;

/// Engine formats whose exports this build imports. An export holds records, vectors and state
/// values, not keys, so format 2's new key layout left it as format 1 wrote it.
const IMPORTED_FORMATS: std::ops::RangeInclusive<u32> = 1..=ENGINE_FORMAT;

/// One entry of a namespace export (one line of the JSON-lines form).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ExportEntry {
    /// The first entry: what the namespace is and which formats the entries are in.
    Namespace {
        /// The namespace's name.
        name: String,
        /// Its lexical analyzer.
        analyzer: Analyzer,
        /// [`crate::ENGINE_FORMAT`] of the exporting engine.
        format: u32,
        /// Format version of the stored values (state values are carried as stored).
        values: u8,
        /// Records that follow.
        records: u64,
    },
    /// An embedding space some vector of the namespace is in; comes before its vectors.
    Space(Space),
    /// A record as stored.
    Record(Record),
    /// A record's vector in one space, as stored (normalized).
    Vector {
        /// The record it belongs to.
        id: RecordId,
        /// The space's name.
        space: String,
        /// Its components.
        vector: Vec<f32>,
    },
    /// A state value of a memory system, as its stored bytes in hexadecimal.
    State {
        /// The state key.
        key: String,
        /// The stored bytes, hex.
        value: String,
    },
}

/// What an export or import moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransferCounts {
    /// Records.
    pub records: u64,
    /// Vectors.
    pub vectors: u64,
    /// State values.
    pub state: u64,
}

impl Inner {
    /// Gives every entry of namespace `name` to `sink`, in export order.
    pub(crate) fn export_namespace(
        &self,
        name: &str,
        sink: &mut dyn FnMut(ExportEntry) -> std::io::Result<()>,
    ) -> Result<TransferCounts> {
        let ns = self.namespace(name)?;
        let _no_writes = ns.write_lock.lock();
        if ns.dropped.load(Ordering::SeqCst) {
            return Err(Error::UnknownNamespace(name.to_string()));
        }
        let mut emit = |entry| sink(entry).map_err(Error::ExportSink);
        let id = ns.info.id;
        emit(ExportEntry::Namespace {
            name: ns.info.name.clone(),
            analyzer: ns.info.analyzer,
            format: ENGINE_FORMAT,
            values: VALUE_FORMAT,
            records: ns.count.load(Ordering::SeqCst),
        })?;
        let mut spaces = BTreeSet::new();
        for item in self.store.iter_namespace_raw(Family::Vectors, id)? {
            let (key, _) = item?;
            spaces.insert(vector_space_of(&key).unwrap_or_default().to_string());
        }
        for space in spaces {
            emit(ExportEntry::Space(self.space(&space)?))?;
        }
        let mut counts = TransferCounts::default();
        for record in self.store.iter_records(id)? {
            emit(ExportEntry::Record(record?))?;
            counts.records += 1;
        }
        for item in self.store.iter_vectors(id)? {
            let (id, space, vector) = item?;
            emit(ExportEntry::Vector { id, space, vector })?;
            counts.vectors += 1;
        }
        for item in self.store.iter_namespace_raw(Family::State, id)? {
            let (key, value) = item?;
            let key = std::str::from_utf8(key.get(4..).unwrap_or_default()).map_err(|_| {
                Error::Corrupt {
                    what: "state key",
                    detail: format!("{key:?} is not UTF-8"),
                }
            })?;
            emit(ExportEntry::State {
                key: key.to_string(),
                value: hex(&value),
            })?;
            counts.state += 1;
        }
        Ok(counts)
    }

    /// Stores the namespace an export describes (see the module documentation).
    pub(crate) fn import_namespace(
        &self,
        entries: &mut dyn Iterator<Item = Result<ExportEntry>>,
    ) -> Result<(NamespaceInfo, TransferCounts)> {
        let header = match entries.next() {
            None => return Err(invalid(1, "the import is empty".into())),
            Some(entry) => entry?,
        };
        let ExportEntry::Namespace {
            name,
            analyzer,
            format,
            values,
            ..
        } = header
        else {
            return Err(invalid(
                1,
                "the first entry must be the namespace header".into(),
            ));
        };
        if !IMPORTED_FORMATS.contains(&format) || values != VALUE_FORMAT {
            return Err(invalid(
                1,
                format!(
                    "exported by engine format {format} with value format {values}; this build \
                     reads engine formats {IMPORTED_FORMATS:?} with value format {VALUE_FORMAT}"
                ),
            ));
        }
        validate_name(&name)?;
        if self.catalog.read().namespaces.contains_key(&name) {
            return Err(Error::NamespaceExists(name));
        }
        let info = self.reserve_staged(&name, analyzer)?;
        let mut stage = Stage::new(self, &info);
        let imported = stage
            .take_all(entries)
            .and_then(|()| stage.flush())
            .and_then(|()| {
                let next = stage.next_record();
                let counts = stage.counts;
                self.publish_staged(&info, stage.staged, Some(next))
                    .map(|()| counts)
            });
        match imported {
            Ok(counts) => Ok((info, counts)),
            Err(e) => {
                if let Err(discard) = discard_staged(&self.store, info.id) {
                    tracing::warn!(
                        "discarding the failed import of {name:?}: {discard} (removed on reopen)"
                    );
                }
                Err(e)
            }
        }
    }
}

/// An import being staged: entries checked and written under the reserved namespace id.
struct Stage<'a> {
    inner: &'a Inner,
    info: &'a NamespaceInfo,
    batch: StoreBatch,
    staged: Staged,
    imported: HashSet<RecordId>,
    /// The spaces declared so far, as this engine has them.
    spaces: HashMap<String, Space>,
    max_id: u64,
    counts: TransferCounts,
}

impl<'a> Stage<'a> {
    fn new(inner: &'a Inner, info: &'a NamespaceInfo) -> Stage<'a> {
        Stage {
            inner,
            info,
            batch: StoreBatch::default(),
            staged: Staged::default(),
            imported: HashSet::new(),
            spaces: HashMap::new(),
            max_id: 0,
            counts: TransferCounts::default(),
        }
    }

    /// Checks and stages every entry after the header.
    fn take_all(&mut self, entries: &mut dyn Iterator<Item = Result<ExportEntry>>) -> Result<()> {
        for (at, entry) in (2u64..).zip(entries) {
            self.take(at, entry?)?;
            if self.batch.len() >= COPY_CHUNK {
                self.flush()?;
            }
        }
        Ok(())
    }

    fn take(&mut self, at: u64, entry: ExportEntry) -> Result<()> {
        let ns = self.info.id;
        match entry {
            ExportEntry::Namespace { .. } => {
                return Err(invalid(at, "a second namespace header".into()));
            }
            ExportEntry::Space(space) => {
                let declared = self
                    .inner
                    .create_space(space)
                    .map_err(|e| invalid(at, e.to_string()))?;
                self.spaces.insert(declared.name.clone(), declared);
            }
            ExportEntry::Record(record) => {
                let id = record.id;
                if id.0 == 0 || id.0 == u64::MAX {
                    return Err(invalid(at, format!("record id {id} is out of range")));
                }
                if !self.imported.insert(id) {
                    return Err(invalid(at, format!("record {id} appears twice")));
                }
                let max = self.inner.options.max_text_bytes;
                if record.text.len() > max {
                    return Err(invalid(
                        at,
                        format!(
                            "record {id}: text of {} bytes, above {max}",
                            record.text.len()
                        ),
                    ));
                }
                self.max_id = self.max_id.max(id.0);
                self.staged.add(self.info, &record);
                let value = codec::encode("record", &record)?;
                self.batch.put(
                    self.inner.store.cf(Family::Records)?,
                    record_key(ns, id),
                    value,
                );
                let index = self.inner.store.cf(Family::Attributes)?;
                for key in self.inner.attributes.keys(ns, id, &record.attributes) {
                    self.batch.put(index, key, []);
                }
                self.counts.records += 1;
            }
            ExportEntry::Vector { id, space, vector } => {
                let Some(declared) = self.spaces.get(&space) else {
                    return Err(invalid(at, format!("vector in undeclared space {space:?}")));
                };
                if !self.imported.contains(&id) {
                    return Err(invalid(
                        at,
                        format!("vector of record {id}, not imported before it"),
                    ));
                }
                // Stored vectors are normalized already; checking (and normalizing again) only
                // rejects a wrong dimension or a non-finite component.
                declared
                    .normalize(&vector)
                    .map_err(|e| invalid(at, e.to_string()))?;
                self.batch.put(
                    self.inner.store.cf(Family::Vectors)?,
                    vector_key(ns, id, &space),
                    encode_vector(&vector),
                );
                self.counts.vectors += 1;
            }
            ExportEntry::State { key, value } => {
                let bytes = unhex(&value).ok_or_else(|| {
                    invalid(at, format!("state {key:?}: the value is not hexadecimal"))
                })?;
                if bytes.first() != Some(&VALUE_FORMAT) {
                    return Err(invalid(
                        at,
                        format!("state {key:?}: not a value of format {VALUE_FORMAT}"),
                    ));
                }
                self.batch.put(
                    self.inner.store.cf(Family::State)?,
                    state_key(ns, &key),
                    bytes,
                );
                self.counts.state += 1;
            }
        }
        Ok(())
    }

    /// Writes what is staged so far.
    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.inner.store.write(std::mem::take(&mut self.batch))
    }

    /// The first id past every imported record.
    fn next_record(&self) -> u64 {
        self.max_id + 1
    }
}

fn invalid(entry: u64, reason: String) -> Error {
    Error::InvalidImport { entry, reason }
}

/// Lowercase hexadecimal of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of a hexadecimal string; `None` if it is not one.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_bad_digits() {
        let bytes = [0u8, 1, 0xab, 0xff];
        assert_eq!(hex(&bytes), "0001abff");
        assert_eq!(unhex("0001abff"), Some(bytes.to_vec()));
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("é1"), None);
    }
}
