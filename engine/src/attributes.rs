//! The attribute index: which records of a namespace have attribute `key` equal to `value`,
//! so that a filtered delete or listing reads the records that match instead of every record
//! of the namespace (a reopened 100k-record namespace spent 66–91 ms of a 76–104 ms
//! `delete_where` scanning).
//!
//! Its parts:
//! - one empty value per (namespace, key, value, record) in [`Family::Attributes`], keyed
//!   `ns | pair digest | record id`, so the records of one (key, value) are one key range, in
//!   id order. The digest is the first 16 bytes of SHA-256 over the store's random salt and
//!   the pair: keys never hold what a record says, because RocksDB copies some keys (the
//!   bounds of its table files) into its MANIFEST, which compaction does not rewrite, and
//!   `Engine::forget` promises that no byte of a forgotten namespace is left;
//! - [`AttributeIndex::keys`], which the write path and imports put or delete in the same
//!   batch as the records the entries describe (a copy copies the entries, whose digests do
//!   not depend on the namespace);
//! - [`AttributeIndex::map_matching`], which reads the records of a filter's first
//!   condition through the index and checks the whole filter on each record (so a digest
//!   collision costs a read, never a wrong answer);
//! - [`AttributeIndex::open`], which indexes a store written before the index existed, once,
//!   and marks it done in META.

use std::hash::BuildHasher;

use crate::store::StoreBatch;
use sha2::{Digest, Sha256};

use crate::codec;
use crate::error::{Error, Result};
use crate::filter::Filter;
use crate::keys::{ns_prefix, prefix_end, record_id_of, record_key, Family, META_ATTRIBUTE_INDEX};
use crate::record::{RecordId, RecordView};
use crate::side_thread::in_chunks_beside;
use crate::store::{Caching, Store};

/// Records indexed per batch while building the index of an existing store.
const BUILD_CHUNK: usize = 4096;

/// Records read per batched lookup.
const LOOKUP_CHUNK: usize = 1024;

/// Matching records from which a filtered read is shared by two threads: a thousand random
/// records took 3.7 ms of a 100k namespace's 10 ms filtered delete on one (docs/history.md).
const SPLIT_FROM: usize = 256;

/// Records the two threads of a filtered read take at a time.
const SHARED_CHUNK: usize = 64;

/// Bytes of a pair's digest in an index key.
const DIGEST: usize = 16;

/// One entry's key: namespace, pair digest, record id.
pub(crate) type IndexKey = [u8; 12 + DIGEST];

/// The entry of the same namespace and attribute pair for the next record id (`None` past the
/// last id): the end of a run of entries, which the write path deletes as one range.
pub(crate) fn next_entry(key: &IndexKey) -> Option<IndexKey> {
    let (pair, id) = key.split_at(4 + DIGEST);
    let id = u64::from_be_bytes(id.try_into().ok()?).checked_add(1)?;
    let mut next = *key;
    next[pair.len()..].copy_from_slice(&id.to_be_bytes());
    Some(next)
}

/// The attribute index of a store: its salt, and the reading and writing of its entries.
pub(crate) struct AttributeIndex {
    salt: [u8; 32],
}

impl AttributeIndex {
    /// The store's index: its salt read from META, or, for a store written before the index
    /// existed, a new salt and every stored record indexed (before anything else writes).
    pub(crate) fn open(store: &Store) -> Result<AttributeIndex> {
        if let Some(salt) = store.get(Family::Meta, META_ATTRIBUTE_INDEX)? {
            let salt = <[u8; 32]>::try_from(salt.as_slice()).map_err(|_| Error::Corrupt {
                what: "attribute index",
                detail: format!("salt of {} bytes", salt.len()),
            })?;
            return Ok(AttributeIndex { salt });
        }
        let index = AttributeIndex { salt: fresh_salt() };
        index.build(store)?;
        Ok(index)
    }

    /// Indexes every stored record, then stores the salt, which marks the index complete.
    fn build(&self, store: &Store) -> Result<()> {
        let cf = store.cf(Family::Attributes)?;
        let mut batch = StoreBatch::default();
        let mut indexed = 0usize;
        for item in store.iter_range(Family::Records, &[], &[0xff; 5])? {
            let (key, value) = item?;
            let ns = key.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok());
            let (Some(ns), Some(id)) = (ns.map(u32::from_be_bytes), record_id_of(&key)) else {
                return Err(Error::Corrupt {
                    what: "record key",
                    detail: format!("{key:?}"),
                });
            };
            let view: RecordView<'_> = codec::decode_borrowed("record", &value)?;
            for key in self.keys(ns, id, &view.attributes) {
                batch.put(cf, key, []);
            }
            indexed += 1;
            if indexed.is_multiple_of(BUILD_CHUNK) {
                store.write(std::mem::take(&mut batch))?;
            }
        }
        batch.put(store.cf(Family::Meta)?, META_ATTRIBUTE_INDEX, self.salt);
        store.write(batch)?;
        if indexed > 0 {
            tracing::info!("indexed the attributes of {indexed} stored records");
        }
        Ok(())
    }

    /// The key of every record of namespace `ns` with attribute `key` equal to `value`.
    fn pair_prefix(&self, ns: u32, key: &str, value: &str) -> [u8; 4 + DIGEST] {
        let mut hasher = Sha256::new();
        hasher.update(self.salt);
        // Attribute keys are bounded by the record size limit, far below 4 GiB.
        hasher.update((key.len() as u32).to_be_bytes());
        hasher.update(key.as_bytes());
        hasher.update(value.as_bytes());
        let digest = hasher.finalize();
        let mut out = [0u8; 4 + DIGEST];
        out[..4].copy_from_slice(&ns_prefix(ns));
        out[4..].copy_from_slice(&digest[..DIGEST]);
        out
    }

    fn entry_key(&self, ns: u32, key: &str, value: &str, id: RecordId) -> IndexKey {
        let mut out = [0u8; 12 + DIGEST];
        out[..4 + DIGEST].copy_from_slice(&self.pair_prefix(ns, key, value));
        out[4 + DIGEST..].copy_from_slice(&id.0.to_be_bytes());
        out
    }

    /// The index keys of record `id` of namespace `ns` with `attributes`: put in the batch
    /// that writes the record, deleted in the one that replaces or deletes it.
    pub(crate) fn keys<'a, K: AsRef<str>, V: AsRef<str>>(
        &'a self,
        ns: u32,
        id: RecordId,
        attributes: impl IntoIterator<Item = (K, V), IntoIter: 'a>,
    ) -> impl Iterator<Item = IndexKey> + 'a {
        attributes
            .into_iter()
            .map(move |(key, value)| self.entry_key(ns, key.as_ref(), value.as_ref(), id))
    }

    /// `map` of every record of namespace `ns` whose attributes `filter` matches, read in
    /// place (see [`RecordView`]) with its stored bytes for a caller that wants the whole
    /// record, in id order: the one scan behind `delete_where` and `records_where`. A filter
    /// with conditions reads the records its first condition names in the index, from
    /// [`SPLIT_FROM`] of them on two threads.
    pub(crate) fn map_matching<T: Send>(
        &self,
        store: &Store,
        ns: u32,
        filter: &Filter,
        caching: Caching,
        map: impl Fn(&RecordView<'_>, &[u8]) -> Result<T> + Sync,
    ) -> Result<Vec<T>> {
        let check = |value: &[u8], out: &mut Vec<T>| -> Result<()> {
            let view: RecordView<'_> = codec::decode_borrowed("record", value)?;
            if filter.matches_attributes(|key| view.attributes.get(key).copied()) {
                out.push(map(&view, value)?);
            }
            Ok(())
        };
        let Some((key, value)) = filter.conditions().next() else {
            let mut out = Vec::new();
            store.for_each_in_namespace(Family::Records, ns, |_, value| check(value, &mut out))?;
            return Ok(out);
        };
        // No limit: the records are all read below anyway.
        let records: Vec<_> = self
            .records_with(store, ns, key, value, usize::MAX)?
            .unwrap_or_default()
            .into_iter()
            .map(|id| record_key(ns, id))
            .collect();
        // Ascending ids, read in batches (a lookup each cost 16 µs of a 100k namespace's
        // filtered delete). An entry is written and deleted with its record, so the record
        // is there.
        let read = |keys: &[[u8; 12]]| -> Result<Vec<T>> {
            let mut out = Vec::with_capacity(keys.len());
            for chunk in keys.chunks(LOOKUP_CHUNK) {
                store.get_sorted(Family::Records, chunk, caching, |value| match value {
                    Some(value) => check(value, &mut out),
                    None => Ok(()),
                })?;
            }
            Ok(out)
        };
        if records.len() < SPLIT_FROM {
            return read(&records);
        }
        in_chunks_beside("mb-filter-read", &records, SHARED_CHUNK, read)
    }

    /// The records of namespace `ns` whose attribute `key` is `value` by the index, in id
    /// order, if there are at most `limit`; `None` if there are more. (A digest collision
    /// can add a record that does not match: callers check the filter on what they read.)
    pub(crate) fn records_with(
        &self,
        store: &Store,
        ns: u32,
        key: &str,
        value: &str,
        limit: usize,
    ) -> Result<Option<Vec<RecordId>>> {
        let prefix = self.pair_prefix(ns, key, value);
        let mut records = Vec::new();
        for entry in store.iter_range(Family::Attributes, &prefix, &prefix_end(&prefix))? {
            if records.len() == limit {
                return Ok(None);
            }
            records.push(record_of_entry(&entry?.0, prefix.len())?);
        }
        Ok(Some(records))
    }
}

/// The record an index entry's key names, after its `prefix` bytes of namespace and digest.
fn record_of_entry(entry: &[u8], prefix: usize) -> Result<RecordId> {
    entry
        .get(prefix..)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(|b| RecordId(u64::from_be_bytes(b)))
        .ok_or_else(|| Error::Corrupt {
            what: "attribute index",
            detail: format!("key {entry:?}"),
        })
}

/// 32 bytes no other store shares: the standard library's per-process random hash keys
/// (drawn from the operating system), mixed with the time.
fn fresh_salt() -> [u8; 32] {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut hasher = Sha256::new();
    for i in 0..4u8 {
        let state = std::collections::hash_map::RandomState::new();
        hasher.update(state.hash_one((i, now)).to_le_bytes());
    }
    hasher.update(now.to_le_bytes());
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::ns_end;
    use crate::record::Record;
    use crate::{Batch, Engine, EngineOptions, NamespaceOptions, NewRecord};

    /// The index's keys, and the keys every stored record calls for.
    fn index_and_records(dir: &std::path::Path) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let store = Store::open(dir, false).unwrap();
        let salt = store
            .get(Family::Meta, META_ATTRIBUTE_INDEX)
            .unwrap()
            .unwrap();
        let index = AttributeIndex {
            salt: salt.try_into().unwrap(),
        };
        let all = |cf| -> Vec<(Vec<u8>, Vec<u8>)> {
            let entries = store.iter_range(cf, &[], &[0xff; 5]).unwrap();
            entries
                .map(|entry| entry.unwrap())
                .map(|(key, value)| (key.to_vec(), value.to_vec()))
                .collect()
        };
        let entries = all(Family::Attributes);
        let mut expected = Vec::new();
        for (key, value) in all(Family::Records) {
            let ns = u32::from_be_bytes(key[..4].try_into().unwrap());
            let record: Record = codec::decode("record", &value).unwrap();
            for (k, v) in &record.attributes {
                expected.push(index.entry_key(ns, k, v, record.id).to_vec());
            }
        }
        expected.sort();
        (entries.into_iter().map(|(key, _)| key).collect(), expected)
    }

    #[test]
    fn the_index_holds_exactly_the_stored_attributes_and_is_built_for_older_stores() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), EngineOptions::default()).unwrap();
        engine
            .create_namespace("ns", NamespaceOptions::default())
            .unwrap();
        let mut batch = Batch::new();
        for i in 0..40 {
            batch.put(NewRecord::new(format!("n {i}")).with_attribute("k", format!("{}", i % 3)));
        }
        let ids = engine.write("ns", batch).unwrap().ids;
        engine
            .update("ns", ids[0], NewRecord::new("x").with_attribute("k", "9"))
            .unwrap();
        engine.update("ns", ids[1], NewRecord::new("y")).unwrap();
        engine.delete("ns", ids[2]).unwrap();
        engine
            .delete_where("ns", &crate::Filter::new().attribute("k", "1"))
            .unwrap();
        engine.copy_namespace("ns", "copy").unwrap();
        engine.drop_namespace("ns").unwrap();
        engine.close().unwrap();
        let (index, expected) = index_and_records(dir.path());
        assert!(!expected.is_empty());
        assert_eq!(index, expected, "no entry missing, none left behind");

        // A store from before the index: no mark, no entries. The next open builds it.
        {
            let store = Store::open(dir.path(), false).unwrap();
            let mut batch = StoreBatch::default();
            batch.delete_range(
                store.cf(Family::Attributes).unwrap(),
                vec![],
                ns_end(u32::MAX),
            );
            batch.delete(store.cf(Family::Meta).unwrap(), META_ATTRIBUTE_INDEX);
            store.write(batch).unwrap();
        }
        let store = Store::open(dir.path(), false).unwrap();
        assert!(store
            .iter_range(Family::Attributes, &[], &[0xff; 5])
            .unwrap()
            .next()
            .is_none());
        drop(store);
        Engine::open(dir.path(), EngineOptions::default())
            .unwrap()
            .close()
            .unwrap();
        let (index, expected) = index_and_records(dir.path());
        assert_eq!(index, expected);
    }
}
