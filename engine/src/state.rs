//! The engine's shared state: the store, the lexical index and the catalog of live namespaces
//! with their derived search state. The public [`crate::Engine`], the write path, recovery,
//! copies and search all work on it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};
use crate::lexical::index::LexicalIndex;
use crate::lexical::LexicalStats;
use crate::namespace::NamespaceInfo;
use crate::options::EngineOptions;
use crate::space::Space;
use crate::store::{Counters, Store};
use crate::vector::collection::SharedCollection;

/// State shared by the engine, its write path and its background committer.
pub(crate) struct Inner {
    pub(crate) path: PathBuf,
    pub(crate) options: EngineOptions,
    pub(crate) store: Store,
    pub(crate) lexical: LexicalIndex,
    pub(crate) catalog: RwLock<Catalog>,
    /// Held while a sequence number is assigned and its batch written, so batches reach
    /// RocksDB and the lexical index in sequence order.
    pub(crate) counters: Mutex<Counters>,
    /// Set when applying a durable write to the lexical index failed; searches then refuse to
    /// answer until the engine is reopened (which replays the change log).
    pub(crate) lexical_failed: AtomicBool,
}

/// In-memory copy of the namespace and space catalog.
#[derive(Default)]
pub(crate) struct Catalog {
    pub(crate) namespaces: HashMap<String, Arc<NamespaceState>>,
    pub(crate) spaces: HashMap<String, Space>,
}

/// One live namespace.
pub(crate) struct NamespaceState {
    pub(crate) info: NamespaceInfo,
    /// Serializes writes (and loading of derived state) in this namespace.
    pub(crate) write_lock: Mutex<()>,
    pub(crate) count: AtomicU64,
    pub(crate) dropped: AtomicBool,
    /// Search structures built from the store on first use.
    pub(crate) derived: OnceLock<Derived>,
}

/// Per-namespace search state derived from the store.
pub(crate) struct Derived {
    pub(crate) lexical: RwLock<LexicalStats>,
    pub(crate) vectors: RwLock<HashMap<String, SharedCollection>>,
}

impl NamespaceState {
    pub(crate) fn new(info: NamespaceInfo, count: u64) -> Self {
        NamespaceState {
            info,
            write_lock: Mutex::new(()),
            count: AtomicU64::new(count),
            dropped: AtomicBool::new(false),
            derived: OnceLock::new(),
        }
    }
}

impl Inner {
    pub(crate) fn namespace(&self, name: &str) -> Result<Arc<NamespaceState>> {
        self.catalog
            .read()
            .namespaces
            .get(name)
            .cloned()
            .ok_or_else(|| Error::UnknownNamespace(name.to_string()))
    }

    pub(crate) fn space(&self, name: &str) -> Result<Space> {
        self.catalog
            .read()
            .spaces
            .get(name)
            .cloned()
            .ok_or_else(|| Error::UnknownSpace(name.to_string()))
    }

    /// Commits the lexical index and forgets the change-log entries it now holds.
    pub(crate) fn commit_lexical(&self) -> Result<()> {
        if let Some(seq) = self.lexical.commit()? {
            self.store.trim_changes(seq)?;
        }
        Ok(())
    }
}
