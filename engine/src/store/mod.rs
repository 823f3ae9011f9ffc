//! RocksDB, the engine's source of truth: its format check and typed access to every column
//! family.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rocksdb::{Direction, IteratorMode, ReadOptions, WriteOptions};

use crate::codec;
use crate::directory::ENGINE_FORMAT;
use crate::directory_lock::Holder;
use crate::error::{Error, Result};
use crate::keys::*;
use crate::record::{Record, RecordId};

mod batch;
mod catalog;
mod changelog;
mod instances;
mod upgrade;
use batch::tagged_key;
pub(crate) use batch::{FamilyHandle, StoreBatch};
pub(crate) use catalog::Counters;
pub(crate) use changelog::{Change, ChangeEntry};
use instances::{column, Instances};
pub(crate) use upgrade::upgrade_format_1;

pub(super) const STORE_DIR: &str = "store";

/// A raw key and value read from RocksDB.
pub(crate) type KeyValue = (Box<[u8]>, Box<[u8]>);

/// Handle on the RocksDB database of an engine directory.
pub(crate) struct Store {
    instances: Instances,
    /// The RocksDB directory: whose disk a failed write checks for space.
    path: PathBuf,
    /// Whether the last write failed for want of space: RocksDB keeps answering writes with
    /// that error until it has resumed by itself, even once space is free again.
    out_of_space: AtomicBool,
    write_options: WriteOptions,
    /// Declared after `instances`, so the directory stays locked until RocksDB has closed.
    _holder: Holder,
}

/// How long after opening an existing store read-only its read-write instance starts opening,
/// unless a write asks for it sooner: long enough for an engine's first reads after a reopen
/// to have the cores to themselves (a 100k-record store's first answers take 5–8 ms, a
/// million-record store's 60–80, `docs/history.md`), short enough that a later write finds
/// it open.
const WRITABLE_OPEN_DELAY: std::time::Duration = std::time::Duration::from_millis(100);

/// Read-ahead of whole-namespace scans.
const SCAN_READAHEAD: usize = 4 << 20;

/// Whether a read keeps the blocks it reads in RocksDB's block cache.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Caching {
    /// Values read again soon (a search's candidates, a listing asked for again).
    Fill,
    /// Values read once: the records a delete removes. Skipping the cache spares inserting
    /// their blocks (and allocating fresh memory for them), a sixth of a cold filtered read.
    Skip,
}

impl Store {
    /// Opens (creating if needed) the database below an engine directory whose lock `holder`
    /// is: an existing one read-only first, read-write in the background ([`instances`]).
    pub(crate) fn open_held(holder: Holder, engine_dir: &Path, sync_writes: bool) -> Result<Store> {
        Store::open_with_delay(holder, engine_dir, sync_writes, WRITABLE_OPEN_DELAY)
    }

    /// [`Store::open_held`], taking the directory's lock itself (tests' shorthand).
    #[cfg(test)]
    pub(crate) fn open(engine_dir: &Path, sync_writes: bool) -> Result<Store> {
        Store::open_held(Holder::take(engine_dir)?, engine_dir, sync_writes)
    }

    /// [`Store::open_held`], an existing store's read-write instance starting `delay` after it
    /// unless a write asks sooner.
    fn open_with_delay(
        holder: Holder,
        engine_dir: &Path,
        sync_writes: bool,
        delay: std::time::Duration,
    ) -> Result<Store> {
        let path: PathBuf = engine_dir.join(STORE_DIR);
        let instances = Instances::open(&path, engine_dir, delay)?;
        let mut write_options = WriteOptions::default();
        write_options.set_sync(sync_writes);
        let store = Store {
            instances,
            path,
            out_of_space: AtomicBool::new(false),
            write_options,
            _holder: holder,
        };
        match store.get(Family::Meta, META_FORMAT)? {
            None => {
                let mut batch = StoreBatch::default();
                batch.put(
                    store.cf(Family::Meta)?,
                    META_FORMAT,
                    ENGINE_FORMAT.to_le_bytes(),
                );
                store.write(batch)?;
            }
            Some(bytes) => {
                let found = bytes
                    .as_slice()
                    .try_into()
                    .map(u32::from_le_bytes)
                    .map_err(|_| Error::Corrupt {
                        what: "format marker",
                        detail: format!("{} bytes", bytes.len()),
                    })?;
                if found != ENGINE_FORMAT {
                    return Err(Error::IncompatibleFormat {
                        path: engine_dir.into(),
                        found,
                        expected: ENGINE_FORMAT,
                    });
                }
            }
        }
        Ok(store)
    }

    /// An existing store opened for reading only, until a write asks for the read-write
    /// instance: for tests of what does and does not write.
    #[cfg(test)]
    pub(crate) fn open_for_reading(engine_dir: &Path) -> Result<Store> {
        Store::open_with_delay(
            Holder::take(engine_dir)?,
            engine_dir,
            false,
            instances::NEVER,
        )
    }

    /// Whether the read-write instance is open (tests of what does and does not write).
    #[cfg(test)]
    pub(crate) fn is_writable(&self) -> bool {
        self.instances.writable().is_some()
    }

    /// A family of the read-write instance, for a write batch (waits for it to open).
    pub(crate) fn cf(&self, family: Family) -> Result<FamilyHandle<'_>> {
        let column = column(self.instances.writer()?, family.column())?;
        Ok(FamilyHandle { column, family })
    }

    pub(crate) fn get(&self, family: Family, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let key = tagged_key(family, key);
        self.instances
            .read(|db| Ok(db.get_cf(column(db, family.column())?, &key)?))
    }

    /// The values of `keys` (in ascending order) in one family, read in one batched lookup,
    /// each given to `visit` (with `None` for a missing key) in order.
    pub(crate) fn get_sorted(
        &self,
        family: Family,
        keys: &[impl AsRef<[u8]>],
        caching: Caching,
        mut visit: impl FnMut(Option<&[u8]>) -> Result<()>,
    ) -> Result<()> {
        let mut read = ReadOptions::default();
        read.fill_cache(matches!(caching, Caching::Fill));
        // The vectors' keys have no tag: no copy of them.
        let tagged_keys: Vec<Vec<u8>>;
        let keys: Vec<&[u8]> = if family.tag().is_empty() {
            keys.iter().map(AsRef::as_ref).collect()
        } else {
            tagged_keys = keys
                .iter()
                .map(|k| tagged_key(family, k.as_ref()))
                .collect();
            tagged_keys.iter().map(Vec::as_slice).collect()
        };
        self.instances.read(|db| {
            let cf = column(db, family.column())?;
            for value in db.batched_multi_get_cf_opt(cf, &keys, true, &read) {
                visit(value?.as_deref())?;
            }
            Ok(())
        })
    }

    /// Applies a batch atomically, with the configured durability.
    pub(crate) fn write(&self, batch: StoreBatch) -> Result<()> {
        self.instances
            .writer()?
            .write_opt(batch.into_inner(), &self.write_options)
            .map_err(|e| self.write_failure(e))?;
        self.out_of_space.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// The error of a failed write: [`Error::StorageFull`] when it is an I/O error and the disk
    /// has too little space for RocksDB to write, or had at the last failure and RocksDB has not
    /// resumed yet (judged by the space, not by the message).
    fn write_failure(&self, error: rocksdb::Error) -> Error {
        if error.kind() == rocksdb::ErrorKind::IOError {
            let full = crate::disk::free_when_full(&self.path);
            if full.is_some() || self.out_of_space.load(Ordering::Relaxed) {
                self.out_of_space.store(true, Ordering::Relaxed);
                return Error::StorageFull {
                    path: self.path.clone(),
                    available: full
                        .or_else(|| crate::disk::available_bytes(&self.path))
                        .unwrap_or(0),
                };
            }
        }
        error.into()
    }

    /// Forces the write-ahead log to disk (nothing to do if the read-write instance is not
    /// open: nothing was written through it).
    pub(crate) fn sync(&self) -> Result<()> {
        match self.instances.writable() {
            Some(db) => db.flush_wal(true).map_err(|e| self.write_failure(e)),
            None => Ok(()),
        }
    }

    /// Writes every memtable to table files, so that the next open has no write-ahead log to
    /// replay (a closed store of millions of records reopens in a fraction of a second).
    pub(crate) fn flush_memtables(&self) -> Result<()> {
        let Some(db) = self.instances.writable() else {
            return Ok(());
        };
        for name in COLUMNS {
            db.flush_cf(column(db, name)?)?;
        }
        Ok(())
    }

    /// Compacts every column family to its last level, where tombstones and the values they
    /// cover are dropped; the table files they were in are deleted.
    pub(crate) fn compact_all(&self) -> Result<()> {
        let mut options = rocksdb::CompactOptions::default();
        options.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
        let db = self.instances.writer()?;
        for name in COLUMNS {
            db.compact_range_cf_opt(column(db, name)?, None::<&[u8]>, None::<&[u8]>, &options);
        }
        Ok(())
    }

    pub(crate) fn record(&self, ns: u32, id: RecordId) -> Result<Option<Record>> {
        self.get(Family::Records, &record_key(ns, id))?
            .map(|b| codec::decode("record", &b))
            .transpose()
    }

    /// Records by id, in the order asked; `None` for ids that do not exist.
    pub(crate) fn records_by_id(&self, ns: u32, ids: &[RecordId]) -> Result<Vec<Option<Record>>> {
        let tag = |id: &RecordId| tagged_key(Family::Records, &record_key(ns, *id));
        let keys: Vec<Vec<u8>> = ids.iter().map(tag).collect();
        self.instances.read(|db| {
            let cf = column(db, Family::Records.column())?;
            db.multi_get_cf(keys.iter().map(|k| (cf, k.as_slice())))
                .into_iter()
                .map(|r| r?.map(|b| codec::decode("record", &b)).transpose())
                .collect()
        })
    }

    /// Iterates the records of a namespace in id (insertion) order.
    pub(crate) fn iter_records(
        &self,
        ns: u32,
    ) -> Result<impl Iterator<Item = Result<Record>> + '_> {
        let it = self.iter_range(Family::Records, &ns_prefix(ns), &ns_end(ns))?;
        Ok(it.map(|item| {
            let (_, value) = item?;
            codec::decode("record", &value)
        }))
    }

    /// Iterates the records of a namespace with ids from `from` on, in id order.
    pub(crate) fn iter_records_from(
        &self,
        ns: u32,
        from: RecordId,
    ) -> Result<impl Iterator<Item = Result<Record>> + '_> {
        let it = self.iter_range(Family::Records, &record_key(ns, from), &ns_end(ns))?;
        Ok(it.map(|item| codec::decode("record", &item?.1)))
    }

    /// Iterates `(record, space, vector)` for every vector of a namespace.
    pub(crate) fn iter_vectors(
        &self,
        ns: u32,
    ) -> Result<impl Iterator<Item = Result<(RecordId, String, Vec<f32>)>> + '_> {
        let it = self.iter_range(Family::Vectors, &ns_prefix(ns), &ns_end(ns))?;
        Ok(it.map(|item| vector_entry(item?)))
    }

    /// The vectors of one record, `(space, vector)`, in space-name order.
    pub(crate) fn vectors_of(&self, ns: u32, id: RecordId) -> Result<Vec<(String, Vec<f32>)>> {
        let (start, end) = vector_range(ns, id);
        self.scan(Family::Vectors, &start, &end)?
            .into_iter()
            .map(|item| vector_entry(item).map(|(_, space, vector)| (space, vector)))
            .collect()
    }

    pub(crate) fn state(&self, ns: u32, key: &str) -> Result<Option<Vec<u8>>> {
        self.get(Family::State, &state_key(ns, key))
    }

    /// State keys of a namespace starting with `prefix`, in byte order.
    pub(crate) fn state_keys(&self, ns: u32, prefix: &str) -> Result<Vec<String>> {
        let start = state_key(ns, prefix);
        let mut out = Vec::new();
        for (key, _) in self.scan(Family::State, &start, &prefix_end(&start))? {
            out.push(String::from_utf8_lossy(&key[4..]).into_owned());
        }
        Ok(out)
    }

    /// Every key and value of namespace `ns` in one of the per-namespace families (records,
    /// vectors, state), in key order, as stored.
    pub(crate) fn iter_namespace_raw(
        &self,
        cf: Family,
        ns: u32,
    ) -> Result<impl Iterator<Item = Result<KeyValue>> + '_> {
        self.iter_range(cf, &ns_prefix(ns), &ns_end(ns))
    }

    /// Calls `visit` with every key and value of namespace `ns` in family `cf`, in key order,
    /// borrowed from RocksDB's iterator: no copy per entry, for scans of a whole namespace.
    pub(crate) fn for_each_in_namespace(
        &self,
        cf: Family,
        ns: u32,
        mut visit: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut read = ReadOptions::default();
        read.set_iterate_upper_bound(tagged_key(cf, &ns_end(ns)));
        // A one-off pass over a namespace: keep it out of the block cache, read ahead.
        read.fill_cache(false);
        read.set_readahead_size(SCAN_READAHEAD);
        self.visit(cf, &ns_prefix(ns), read, |key, value| {
            visit(key, value)?;
            Ok(true)
        })
    }

    /// Calls `visit` with the keys and values of family `cf` from `start` to `end` (excluded),
    /// in key order, until it returns `false`: a bounded read that, unlike
    /// [`Store::iter_range`], any open instance answers.
    pub(crate) fn visit_range(
        &self,
        cf: Family,
        start: &[u8],
        end: &[u8],
        visit: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let mut read = ReadOptions::default();
        read.set_iterate_upper_bound(tagged_key(cf, end));
        self.visit(cf, start, read, visit)
    }

    /// Calls `visit` with every key (untagged) and value of family `cf` from `start` on within
    /// `read`'s bounds (tagged), until it returns `false`.
    fn visit(
        &self,
        cf: Family,
        start: &[u8],
        read: ReadOptions,
        mut visit: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let untag = cf.tag().len();
        self.instances.read(|db| {
            let mut it = db.raw_iterator_cf_opt(column(db, cf.column())?, read);
            it.seek(tagged_key(cf, start));
            while it.valid() {
                if let (Some(key), Some(value)) = (it.key(), it.value()) {
                    if !visit(key.get(untag..).unwrap_or_default(), value)? {
                        return Ok(());
                    }
                }
                it.next();
            }
            Ok(it.status()?)
        })
    }

    /// Every key and value of a family starting with `prefix`.
    pub(crate) fn scan_prefix(&self, cf: Family, prefix: &[u8]) -> Result<Vec<KeyValue>> {
        self.scan(cf, prefix, &prefix_end(prefix))
    }

    /// Iterates a family's keys from `start` to `end` (excluded), on the read-write instance
    /// (waiting for it to open: an iterator outlives the call).
    pub(crate) fn iter_range<'a>(
        &'a self,
        cf: Family,
        start: &[u8],
        end: &[u8],
    ) -> Result<impl Iterator<Item = Result<KeyValue>> + 'a> {
        range(self.instances.writer()?, cf, start, end)
    }

    /// Every key and value of a family from `start` to `end` (excluded), collected.
    fn scan(&self, cf: Family, start: &[u8], end: &[u8]) -> Result<Vec<KeyValue>> {
        self.instances
            .read(|db| range(db, cf, start, end)?.collect())
    }
}

/// The keys (untagged) and values of family `cf` of `db` from `start` to `end` (excluded).
fn range<'a>(
    db: &'a rocksdb::DB,
    cf: Family,
    start: &[u8],
    end: &[u8],
) -> Result<impl Iterator<Item = Result<KeyValue>> + 'a> {
    let mut read = ReadOptions::default();
    read.set_iterate_upper_bound(tagged_key(cf, end));
    let start = tagged_key(cf, start);
    let mode = IteratorMode::From(&start, Direction::Forward);
    let it = db.iterator_cf_opt(column(db, cf.column())?, read, mode);
    let untag = cf.tag().len();
    Ok(it.map(move |entry| {
        let (key, value) = entry?;
        let key = match untag {
            0 => key,
            n => key.get(n..).unwrap_or_default().into(),
        };
        Ok((key, value))
    }))
}

/// A vectors-family entry as `(record, space, vector)`.
fn vector_entry((key, value): KeyValue) -> Result<(RecordId, String, Vec<f32>)> {
    let mut vector = Vec::new();
    let (id, space) =
        decode_vector_entry(&key, &value, &mut vector).ok_or_else(|| Error::Corrupt {
            what: "vector",
            detail: format!("key {key:?}"),
        })?;
    Ok((id, space.to_string(), vector))
}

/// RocksDB merge operator of the counters: the largest of the stored value and the operands
/// (`None`, a corruption error, if none of them is a counter).
fn max_u64(
    _key: &[u8],
    existing: Option<&[u8]>,
    operands: &rocksdb::MergeOperands,
) -> Option<Vec<u8>> {
    existing
        .into_iter()
        .chain(operands)
        .filter_map(decode_u64)
        .max()
        .map(|v| encode_u64(v).to_vec())
}
