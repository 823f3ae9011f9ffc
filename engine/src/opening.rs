//! What [`crate::Engine::open`] reads from disk: the store and the lexical index, opened side by
//! side.
//!
//! The two do not depend on each other until the lexical index catches up with the store, so
//! the lexical index opens on a thread of its own while this one opens the store and reads what
//! the engine keeps of it in memory: tantivy's part is the smaller one, so it costs the open
//! nothing (measured in `docs/history.md`).
//!
//! The directory's lock ([`Holder`]) is taken first: nothing in a directory another process
//! holds is read, the lexical index is only ever rebuilt by its holder, and a second process
//! is told who holds it (RocksDB's own lock would keep it out too, but says so only in words).
//! The directory's format was checked before ([`crate::directory`]); a format-1 directory's
//! store is upgraded under the lock, before either side opens. If the store then fails
//! to open, the lexical side may already have replaced an unusable index with an empty one:
//! derived data, which the next open that succeeds fills from the store.

use std::path::Path;
use std::sync::Arc;

use crate::attributes::AttributeIndex;
use crate::copy::discard_staged_copies;
use crate::directory::{mark_current, DirectoryFormat};
use crate::directory_lock::Holder;
use crate::error::{Error, Result};
use crate::lexical::index::{LexicalIndex, OpenedLexical};
use crate::options::EngineOptions;
use crate::snapshot::Snapshots;
use crate::state::{Catalog, NamespaceState};
use crate::store::{upgrade_format_1, Counters, Store};

/// The lexical index's directory in an engine directory.
const LEXICAL_DIR: &str = "lexical";
/// The vector files' directory in an engine directory (`crate::snapshot`).
const VECTORS_DIR: &str = "vectors";

/// Everything an engine is made of, as read from its directory.
pub(crate) struct Opened {
    pub(crate) store: Arc<Store>,
    pub(crate) attributes: AttributeIndex,
    pub(crate) counters: Counters,
    pub(crate) snapshots: Snapshots,
    pub(crate) catalog: Catalog,
    pub(crate) lexical: OpenedLexical,
}

/// Opens the engine directory `path` (which exists and is an engine's, of `format`): takes its
/// lock, upgrades it if it is of format 1, then opens the lexical index on another thread
/// while the store opens on this one.
pub(crate) fn open(
    path: &Path,
    format: DirectoryFormat,
    options: &EngineOptions,
) -> Result<Opened> {
    let holder = Holder::take(path)?;
    if format == DirectoryFormat::Format1 {
        upgrade_format_1(path)?;
        mark_current(path)?;
    }
    let lexical_dir = path.join(LEXICAL_DIR);
    let memory = options.lexical_writer_memory;
    let (stored, lexical) = std::thread::scope(|scope| {
        let beside = std::thread::Builder::new()
            .name("mb-lexical-open".into())
            .spawn_scoped(scope, || open_lexical(&lexical_dir, memory));
        let stored = open_store(holder, path, options);
        let lexical = match beside {
            Ok(thread) => thread.join().unwrap_or_else(|_| {
                Err(Error::Background(
                    "the lexical index's open panicked".into(),
                ))
            }),
            // No thread to be had: the lexical index opens after the store.
            Err(_) => open_lexical(&lexical_dir, memory),
        };
        (stored, lexical)
    });
    let (store, attributes, counters, snapshots, catalog) = stored?;
    Ok(Opened {
        store,
        attributes,
        counters,
        snapshots,
        catalog,
        lexical: lexical?,
    })
}

/// The store side of an [`Opened`] engine.
type StoreSide = (Arc<Store>, AttributeIndex, Counters, Snapshots, Catalog);

/// Opens the store under `holder`'s lock and reads what the engine keeps of it in memory.
fn open_store(holder: Holder, path: &Path, options: &EngineOptions) -> Result<StoreSide> {
    let store = Arc::new(Store::open_held(holder, path, options.sync_writes)?);
    discard_staged_copies(&store)?;
    let attributes = AttributeIndex::open(&store)?;
    let counters = store.counters()?;
    let snapshots = Snapshots::open(
        &store,
        counters.seq,
        path.join(VECTORS_DIR),
        options.vector_snapshots,
        options.derived_memory_budget,
    )?;
    let mut catalog = Catalog::default();
    for (info, count) in store.namespaces()? {
        catalog.namespaces.insert(
            info.name.clone(),
            Arc::new(NamespaceState::new(info, count)),
        );
    }
    for space in store.spaces()? {
        catalog.spaces.insert(space.name.clone(), space);
    }
    Ok((store, attributes, counters, snapshots, catalog))
}

/// Opens the lexical index in `dir`; one that cannot be used is deleted and made anew, to be
/// filled from the store as it catches up.
fn open_lexical(dir: &Path, writer_memory: usize) -> Result<OpenedLexical> {
    match LexicalIndex::open(dir, writer_memory) {
        Ok(opened) => Ok(opened),
        Err(e) => {
            tracing::warn!("lexical index unusable ({e}); rebuilding it from the store");
            std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            LexicalIndex::open(dir, writer_memory)
        }
    }
}
