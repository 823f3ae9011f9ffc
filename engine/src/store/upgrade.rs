//! The upgrade of a format-1 store, where every family had a column family of its own, to the
//! current layout, where all but the vectors' share RocksDB's default one ([`Family`]).
//!
//! It runs under the directory's lock, before anything else opens the store:
//! 1. every entry of each old family is copied, behind its tag, into the shared column family,
//!    in batches (the vectors' family keeps its column family and its keys);
//! 2. the store's format value is raised and the shared column family is flushed to a table
//!    file, so that the copies stand without the write-ahead log;
//! 3. the old column families are dropped.
//!
//! Then the directory's marker is rewritten (`crate::opening`). Every step can be done again:
//! a crash anywhere leaves the marker at format 1 and the next open starts over; an old column
//! family is only dropped once its copy is flushed, so one already dropped was copied, and
//! copying one again writes the same entries.

use std::path::Path;

use rocksdb::{ColumnFamilyDescriptor, IteratorMode, Options, DB};

use super::batch::{FamilyHandle, StoreBatch};
use super::instances::{column, db_options, shared_column_options, vectors_column_options};
use super::STORE_DIR;
use crate::directory::ENGINE_FORMAT;
use crate::error::Result;
use crate::keys::{Family, META_FORMAT, SHARED_COLUMN, VECTORS_COLUMN};

/// Entries copied per write while upgrading.
const UPGRADE_BATCH: usize = 4096;

/// Upgrades the store of the format-1 engine directory `engine_dir` to the current layout
/// (nothing to do if it has no store yet).
pub(crate) fn upgrade_format_1(engine_dir: &Path) -> Result<()> {
    let path = engine_dir.join(STORE_DIR);
    if !path.join("CURRENT").is_file() {
        return Ok(());
    }
    let existing = DB::list_cf(&Options::default(), &path)?;
    let old: Vec<Family> = Family::ALL
        .into_iter()
        .filter(|family| family.column() == SHARED_COLUMN)
        .filter(|family| existing.iter().any(|name| name == family.name()))
        .collect();
    tracing::info!(
        "upgrading the store of {} to format {ENGINE_FORMAT} ({} column families to move)",
        engine_dir.display(),
        old.len()
    );
    let descriptors = existing
        .iter()
        .map(|name| ColumnFamilyDescriptor::new(name, format_1_options(name)));
    let mut db = DB::open_cf_descriptors(&db_options(0), &path, descriptors)?;
    let shared = column(&db, SHARED_COLUMN)?;
    for &family in &old {
        let into = FamilyHandle {
            column: shared,
            family,
        };
        let mut batch = StoreBatch::default();
        for entry in db.iterator_cf(column(&db, family.name())?, IteratorMode::Start) {
            let (key, value) = entry?;
            batch.put(into, key, value);
            if batch.len() >= UPGRADE_BATCH {
                db.write(std::mem::take(&mut batch).into_inner())?;
            }
        }
        db.write(batch.into_inner())?;
    }
    let mut batch = StoreBatch::default();
    let meta = FamilyHandle {
        column: shared,
        family: Family::Meta,
    };
    batch.put(meta, META_FORMAT, ENGINE_FORMAT.to_le_bytes());
    db.write(batch.into_inner())?;
    db.flush_cf(shared)?;
    for family in old {
        db.drop_cf(family.name())?;
        // An upgrade cut short with some old column families dropped and some not.
        fail::fail_point!("store::upgrade::dropped", |_| Err(crate::error::Error::io(
            &path,
            std::io::Error::other("upgrade cut short")
        )));
    }
    Ok(())
}

/// The options a column family of a format-1 store is opened with to be read: those it was
/// written with where they matter (the meta family's merge operator).
fn format_1_options(name: &str) -> Options {
    match name {
        SHARED_COLUMN => shared_column_options(),
        VECTORS_COLUMN => vectors_column_options(),
        // Counters are merged in the meta family: its values read merged.
        name if name == Family::Meta.name() => shared_column_options(),
        _ => Options::default(),
    }
}
