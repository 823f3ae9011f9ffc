//! The store's atomic write: RocksDB's write batch, with every key written in its family's
//! place (its column family, behind its tag: [`Family`]).

use rocksdb::{ColumnFamily, WriteBatch};

use crate::keys::Family;

/// A family of the read-write instance, ready for a [`StoreBatch`] (`Store::cf`).
#[derive(Clone, Copy)]
pub(crate) struct FamilyHandle<'a> {
    pub(super) column: &'a ColumnFamily,
    pub(super) family: Family,
}

/// Writes that `Store::write` applies together or not at all.
#[derive(Default)]
pub(crate) struct StoreBatch {
    batch: WriteBatch,
    /// The tagged key being added, reused from one call to the next.
    key: Vec<u8>,
    /// The tagged end of the range being deleted.
    end: Vec<u8>,
}

impl StoreBatch {
    /// Sets `key` of `family` to `value`.
    pub(crate) fn put(
        &mut self,
        family: FamilyHandle<'_>,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) {
        let key = tagged(&mut self.key, family.family, key.as_ref());
        self.batch.put_cf(family.column, key, value);
    }

    /// Deletes `key` of `family`.
    pub(crate) fn delete(&mut self, family: FamilyHandle<'_>, key: impl AsRef<[u8]>) {
        let key = tagged(&mut self.key, family.family, key.as_ref());
        self.batch.delete_cf(family.column, key);
    }

    /// Deletes every key of `family` from `from` to `to` (excluded).
    pub(crate) fn delete_range(
        &mut self,
        family: FamilyHandle<'_>,
        from: impl AsRef<[u8]>,
        to: impl AsRef<[u8]>,
    ) {
        let from = tagged(&mut self.key, family.family, from.as_ref());
        let to = tagged(&mut self.end, family.family, to.as_ref());
        self.batch.delete_range_cf(family.column, from, to);
    }

    /// Merges `value` into `key` of `family` (the store's merge operator keeps the largest
    /// counter).
    pub(crate) fn merge(
        &mut self,
        family: FamilyHandle<'_>,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) {
        let key = tagged(&mut self.key, family.family, key.as_ref());
        self.batch.merge_cf(family.column, key, value);
    }

    /// How many writes the batch holds.
    pub(crate) fn len(&self) -> usize {
        self.batch.len()
    }

    /// Whether the batch holds no write.
    pub(crate) fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// RocksDB's batch, to apply.
    pub(super) fn into_inner(self) -> WriteBatch {
        self.batch
    }
}

/// `key` of `family` as stored in its column family: its tag, then the key.
pub(super) fn tagged_key(family: Family, key: &[u8]) -> Vec<u8> {
    [family.tag(), key].concat()
}

/// [`tagged_key`], written into `buffer` (a batch reuses one).
fn tagged<'b>(buffer: &'b mut Vec<u8>, family: Family, key: &[u8]) -> &'b [u8] {
    buffer.clear();
    buffer.extend_from_slice(family.tag());
    buffer.extend_from_slice(key);
    buffer
}
