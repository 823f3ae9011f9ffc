//! The store's RocksDB instances: a read-only one that answers first, and the read-write one
//! that takes over.
//!
//! Opening an existing store read-write is mostly writing: a new MANIFEST, OPTIONS file and
//! write-ahead log, each synced, and every column family's options dumped into the info log
//! (7–10 ms for the 100k store of `docs/history.md`, however small the store). Opening it
//! read-only writes none of that (0.6–1.4 ms). So an existing store is opened read-only,
//! which answers reads at once, while a background thread opens it read-write:
//!
//! - the read-write instance starts opening a moment later (`delay`: the engine's first reads
//!   after a reopen have the cores to themselves), or at once when a write asks for it;
//! - reads ([`Instances::read`]) use the read-write instance once it is open, the read-only
//!   one until then;
//! - writes, and reads that hand out iterators, wait for the read-write instance
//!   ([`Instances::writer`]);
//! - once the read-write instance is open, the read-only one is closed as soon as no read
//!   is using it, so that it keeps no table file a compaction has deleted.
//!
//! Nothing is written before the read-write instance is open, so both hold the same data
//! and a read sees the same answer from either. A new store has no read-only step.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rocksdb::{ColumnFamily, ColumnFamilyDescriptor, Options, DB};

use crate::error::{Error, Result};
use crate::keys::*;

/// Block size of the vectors' column family (RocksDB's default is 4 KiB, two or three vectors):
/// about ten vectors. A search's candidates are point reads of whole blocks (40 cold ones after
/// a reopen: 2.6 ms with 64 KiB blocks, 0.6 ms with 16), and whole-namespace scans read ahead,
/// so they barely notice the smaller blocks.
const VECTOR_BLOCK_BYTES: usize = 16 << 10;

/// Write buffer (memtable) of the column family every family but the vectors' shares: 8 MiB,
/// where RocksDB's default is 64. These families hold small values (records' text, index
/// entries, change log), so a full default buffer is a skip list of a few hundred thousand entries, and each
/// point write into it (a filtered delete writes four per record) walks it through cache
/// misses. Right after a 100k bulk load, the batch of a filtered delete of about a thousand
/// records took 4.1 ms to write on average, 2.1 ms with 8 MiB buffers (`delete_after_load`,
/// sixteen deletes each), while a 100k store's reopen took as long (three more table files)
/// and peak memory fell 597 -> 528 MiB; a fresh 1M store closes with 50 table files instead of
/// 30, and opens 8-11 ms slower with its first answer unchanged (`docs/history.md`). The
/// vectors' values are 1.5 KiB, so their default buffer holds few entries, and a smaller one
/// saved little there. (Those were five column families of 8 MiB each; sharing one since
/// format 2, the filtered deletes and the open measured as fast or faster, `docs/history.md`.)
const SMALL_VALUE_WRITE_BUFFER: usize = 8 << 20;

/// The RocksDB instances of one store directory.
pub(super) struct Instances {
    shared: Arc<Shared>,
    /// The thread opening the read-write instance, joined when the store closes.
    opening: Option<JoinHandle<()>>,
    /// Sends that thread its start, sooner than its delay; dropped unsent, it tells the
    /// thread not to open at all.
    go: Mutex<Option<mpsc::Sender<()>>>,
    /// The engine directory, named in errors.
    engine_dir: PathBuf,
}

/// What the opening thread hands over.
struct Shared {
    /// The read-write instance, or why it did not open.
    writable: OnceLock<std::result::Result<DB, Failure>>,
    /// The read-only instance, while it may still be answering.
    early: RwLock<Option<DB>>,
}

/// Why the read-write instance did not open.
enum Failure {
    Store(rocksdb::Error),
    Panicked,
}

impl Instances {
    /// Opens the store at `path` (below `engine_dir`): read-only now and read-write in the
    /// background `delay` later (or when a write asks) if it exists, read-write now if it
    /// does not (or cannot be read read-only).
    pub(super) fn open(path: &Path, engine_dir: &Path, delay: Duration) -> Result<Instances> {
        // Nothing writes before the read-write instance is open: both opens see these files.
        let tables = table_files(path);
        let early = if path.join("CURRENT").is_file() {
            DB::open_cf_descriptors_read_only(&db_options(tables), path, columns(), false)
                .inspect_err(|e| tracing::debug!("read-only open of {}: {e}", path.display()))
                .ok()
        } else {
            None
        };
        let reopened = early.is_some();
        let shared = Arc::new(Shared {
            writable: OnceLock::new(),
            early: RwLock::new(early),
        });
        let mut instances = Instances {
            shared: Arc::clone(&shared),
            opening: None,
            go: Mutex::new(None),
            engine_dir: engine_dir.to_path_buf(),
        };
        if !reopened {
            let _ = shared.writable.set(open_writable(path, tables));
            instances.writer()?;
            return Ok(instances);
        }
        let path = path.to_path_buf();
        let (go, started) = mpsc::channel::<()>();
        let opening = std::thread::Builder::new()
            .name("mb-store-open".into())
            .spawn(move || {
                if let Err(RecvTimeoutError::Disconnected) = started.recv_timeout(delay) {
                    return;
                }
                let opened = std::panic::catch_unwind(|| open_writable(&path, tables));
                let opened = opened.unwrap_or_else(|_| Err(Failure::Panicked));
                let ok = opened.is_ok();
                let _ = shared.writable.set(opened);
                if ok {
                    // New reads go to the read-write instance now; this waits for the
                    // ones still on the read-only instance (writers wait for the one above,
                    // never for this).
                    drop(shared.early.write().take());
                }
            })
            .map_err(|e| Error::io(engine_dir, e))?;
        instances.opening = Some(opening);
        *instances.go.lock() = Some(go);
        Ok(instances)
    }

    /// Runs `read` on the read-write instance if it is open, else on the read-only one.
    /// `read` must not keep what it borrows (an iterator, say): use [`Instances::writer`].
    pub(super) fn read<T>(&self, read: impl FnOnce(&DB) -> Result<T>) -> Result<T> {
        if let Some(Ok(db)) = self.shared.writable.get() {
            return read(db);
        }
        // Recursive, so a read inside a read never waits behind the closing thread.
        let early = self.shared.early.read_recursive();
        match early.as_ref() {
            Some(db) => read(db),
            None => {
                drop(early);
                read(self.writer()?)
            }
        }
    }

    /// The read-write instance if it is open.
    pub(super) fn writable(&self) -> Option<&DB> {
        self.shared.writable.get()?.as_ref().ok()
    }

    /// Starts opening the read-write instance now (no-op when it is open or opening).
    fn start_writable(&self) {
        if let Some(go) = self.go.lock().take() {
            let _ = go.send(());
        }
    }

    /// The read-write instance, waiting for it to open. If it could not, every call
    /// returns why, and reads go on from the read-only instance.
    pub(super) fn writer(&self) -> Result<&DB> {
        self.start_writable();
        match self.shared.writable.wait() {
            Ok(db) => Ok(db),
            Err(Failure::Store(e)) => Err(open_error(&self.engine_dir, e.clone())),
            Err(Failure::Panicked) => Err(Error::Background(
                "the store's read-write open panicked".into(),
            )),
        }
    }
}

impl Drop for Instances {
    /// Waits for the opening thread (telling it not to open if it has not started), so that
    /// every instance is closed when the store is.
    fn drop(&mut self) {
        drop(self.go.get_mut().take());
        if let Some(thread) = self.opening.take() {
            let _ = thread.join();
        }
    }
}

/// A column family of `db`.
pub(super) fn column<'a>(db: &'a DB, name: &'static str) -> Result<&'a ColumnFamily> {
    db.cf_handle(name).ok_or_else(|| Error::Corrupt {
        what: "store",
        detail: format!("column family {name} is missing"),
    })
}

/// The read-write instance of the store at `path`, which holds `table_files` table files.
fn open_writable(path: &Path, table_files: usize) -> std::result::Result<DB, Failure> {
    let mut options = db_options(table_files);
    options.create_if_missing(true);
    options.create_missing_column_families(true);
    DB::open_cf_descriptors(&options, path, columns()).map_err(Failure::Store)
}

/// An open's failure, a corruption naming the engine directory.
fn open_error(engine_dir: &Path, error: rocksdb::Error) -> Error {
    match error.kind() {
        rocksdb::ErrorKind::Corruption => Error::Damaged {
            detail: format!("{}: {}", engine_dir.display(), error.into_string()),
        },
        _ => Error::from(error),
    }
}

/// The database options, for a store holding `table_files` table files.
pub(super) fn db_options(table_files: usize) -> Options {
    let mut options = Options::default();
    options.increase_parallelism(2);
    // RocksDB opens a column family's table files on this many threads, starting all but one
    // of them afresh for every family at every open, however few files it has (its default
    // is 16). A second thread pays for its start only when the families have several files
    // each: with seven column families it slowed a 100k store's open and sped up a
    // million-record store's first vector answer; with two, the thread count makes no
    // difference to a 100k store (docs/history.md has the measurements).
    let threads = if table_files > 2 * COLUMNS.len() {
        2
    } else {
        1
    };
    options.set_max_file_opening_threads(threads);
    // One old info log, not a thousand (every open starts a new one).
    options.set_keep_log_file_num(2);
    options.set_compression_type(rocksdb::DBCompressionType::Lz4);
    options
}

/// How many table files the store at `path` holds (none if it cannot be listed: RocksDB's
/// open then says why).
fn table_files(path: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    let is_table = |name: &std::ffi::OsStr| name.as_encoded_bytes().ends_with(b".sst");
    entries
        .filter(|entry| entry.as_ref().is_ok_and(|e| is_table(&e.file_name())))
        .count()
}

/// The store's column families ([`COLUMNS`]), with their options.
fn columns() -> Vec<ColumnFamilyDescriptor> {
    vec![
        ColumnFamilyDescriptor::new(SHARED_COLUMN, shared_column_options()),
        ColumnFamilyDescriptor::new(VECTORS_COLUMN, vectors_column_options()),
    ]
}

/// The options of the column family every family but the vectors' shares: small values,
/// compressed, the counters merged by maximum.
pub(super) fn shared_column_options() -> Options {
    let mut cf = Options::default();
    cf.set_compression_type(rocksdb::DBCompressionType::Lz4);
    cf.set_write_buffer_size(SMALL_VALUE_WRITE_BUFFER);
    cf.set_merge_operator_associative("max_u64", super::max_u64);
    cf
}

/// The options of the vectors' column family: vectors do not compress, and are read
/// whole-namespace at a time as well as one by one, so blocks of a few vectors, uncompressed.
pub(super) fn vectors_column_options() -> Options {
    let mut cf = Options::default();
    let mut block = rocksdb::BlockBasedOptions::default();
    block.set_block_size(VECTOR_BLOCK_BYTES);
    cf.set_block_based_table_factory(&block);
    cf.set_compression_type(rocksdb::DBCompressionType::None);
    cf
}

/// A delay long enough that the read-write instance opens only when a write asks (tests of
/// what does and does not write).
#[cfg(test)]
pub(super) const NEVER: Duration = Duration::from_secs(3600);

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{column, Instances, NEVER};
    use crate::error::Error;
    use crate::keys::{Family, COLUMNS, SHARED_COLUMN};
    use crate::store::{Store, StoreBatch};

    /// The meta family's `key`, as stored in its column family.
    const KEY: &[u8] = b"\x01key";

    /// A store directory holding `key` = `value` in the meta family.
    fn store_with(dir: &std::path::Path, value: &[u8]) {
        let store = Store::open(dir, false).unwrap();
        let mut batch = StoreBatch::default();
        batch.put(store.cf(Family::Meta).unwrap(), b"key", value);
        store.write(batch).unwrap();
    }

    fn read_key(instances: &Instances) -> Vec<u8> {
        let read = instances.read(|db| Ok(db.get_cf(column(db, SHARED_COLUMN)?, KEY)?));
        read.unwrap().unwrap()
    }

    #[test]
    fn a_reopened_store_reads_before_it_can_write_then_hands_over() {
        let dir = tempfile::tempdir().unwrap();
        store_with(dir.path(), b"first");
        let instances = Instances::open(&dir.path().join("store"), dir.path(), NEVER).unwrap();
        assert_eq!(read_key(&instances), b"first");
        assert!(instances.writable().is_none(), "the read waited to write");

        let db = instances.writer().unwrap();
        db.put_cf(column(db, SHARED_COLUMN).unwrap(), KEY, b"second")
            .unwrap();
        assert_eq!(read_key(&instances), b"second");
        let deadline = Instant::now() + Duration::from_secs(10);
        while instances.shared.early.read().is_some() {
            assert!(
                Instant::now() < deadline,
                "the read-only instance stayed open"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn reads_under_way_across_the_hand_over_see_every_acknowledged_write() {
        let dir = tempfile::tempdir().unwrap();
        store_with(dir.path(), b"0");
        let instances = Instances::open(&dir.path().join("store"), dir.path(), NEVER).unwrap();
        let written = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    let deadline = Instant::now() + Duration::from_secs(20);
                    loop {
                        let acknowledged = written.load(std::sync::atomic::Ordering::SeqCst);
                        // A read inside a read, as a visiting read's callback may do.
                        let (outer, inner) = instances
                            .read(|db| {
                                let outer = db.get_cf(column(db, SHARED_COLUMN)?, KEY)?;
                                Ok((outer, read_key(&instances)))
                            })
                            .unwrap();
                        for seen in [outer.unwrap(), inner] {
                            let seen: u64 = String::from_utf8(seen).unwrap().parse().unwrap();
                            assert!(seen >= acknowledged, "{seen} read after {acknowledged}");
                        }
                        if acknowledged == 50 {
                            break;
                        }
                        assert!(Instant::now() < deadline, "readers stalled");
                    }
                });
            }
            std::thread::sleep(Duration::from_millis(5));
            for n in 1..=50u64 {
                let db = instances.writer().unwrap();
                let value = n.to_string();
                db.put_cf(column(db, SHARED_COLUMN).unwrap(), KEY, value.as_bytes())
                    .unwrap();
                written.store(n, std::sync::atomic::Ordering::SeqCst);
            }
        });
    }

    #[test]
    fn the_writable_instance_opens_unasked_after_its_delay() {
        let dir = tempfile::tempdir().unwrap();
        store_with(dir.path(), b"first");
        let delay = Duration::from_millis(20);
        let instances = Instances::open(&dir.path().join("store"), dir.path(), delay).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while instances.writable().is_none() {
            assert!(
                Instant::now() < deadline,
                "the read-write instance never opened"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(read_key(&instances), b"first");
    }

    #[test]
    fn a_store_that_cannot_open_to_write_refuses_writes_and_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        store_with(dir.path(), b"kept");
        // Another read-write instance holds RocksDB's lock (the engine's own holder lock
        // would keep out another engine; this stands for any failure of the background open).
        let other = rocksdb::DB::open_cf(
            &rocksdb::Options::default(),
            dir.path().join("store"),
            COLUMNS,
        )
        .unwrap();
        let store = Store::open(dir.path(), false).unwrap();
        let refused = store.cf(Family::Meta).map(|_| ());
        assert!(matches!(refused, Err(Error::Storage(_))), "{refused:?}");
        assert!(matches!(
            store.write(StoreBatch::default()),
            Err(Error::Storage(_))
        ));
        assert_eq!(store.get(Family::Meta, b"key").unwrap().unwrap(), b"kept");
        drop(other);
    }
}
