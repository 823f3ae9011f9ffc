//! The engine's shared state: the store, the lexical index and the catalog of live namespaces
//! with their derived search state. The public [`crate::Engine`], the write path, recovery,
//! copies and search all work on it.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::attributes::AttributeIndex;
use crate::codec;
use crate::deferred_stats::DeferredStats;
use crate::error::{Error, Result};
use crate::keys::{space_key, Family};
use crate::lexical::index::LexicalIndex;
use crate::namespace::NamespaceInfo;
use crate::options::EngineOptions;
use crate::residency::{Evictable, Residency};
use crate::sequencer::Sequencer;
use crate::snapshot::Snapshots;
use crate::space::{Space, MAX_DIM, MAX_SPACE_NAME};
use crate::store::{Store, StoreBatch};
use crate::vector::collection::{stop_graph_builds, SharedCollection};

/// State shared by the engine, its write path and its background committer.
pub(crate) struct Inner {
    pub(crate) path: PathBuf,
    pub(crate) options: EngineOptions,
    /// Shared with the background loads of vectors, which hold it weakly.
    pub(crate) store: Arc<Store>,
    /// Which records have which attributes, for filtered deletes and listings.
    pub(crate) attributes: AttributeIndex,
    pub(crate) lexical: LexicalIndex,
    pub(crate) catalog: RwLock<Catalog>,
    /// Numbers writes and knows through which number every write is done.
    pub(crate) sequencer: Sequencer,
    /// Which namespaces keep their derived state in memory.
    pub(crate) residency: Residency,
    /// The BM25 statistics written at the last close, while still exact.
    pub(crate) snapshots: Snapshots,
    /// The HNSW beam width of vector searches: `options.hnsw.ef_search` until
    /// [`Engine::set_ef_search`](crate::Engine::set_ef_search) changes it.
    pub(crate) ef_search: AtomicUsize,
}

/// In-memory copy of the namespace and space catalog.
#[derive(Default)]
pub(crate) struct Catalog {
    /// By name, in order: a prefix's namespaces are one range ([`crate::Engine::namespaces_under`]).
    pub(crate) namespaces: BTreeMap<String, Arc<NamespaceState>>,
    pub(crate) spaces: HashMap<String, Space>,
}

/// One live namespace.
pub(crate) struct NamespaceState {
    pub(crate) info: NamespaceInfo,
    /// Serializes writes (and loading of derived state) in this namespace.
    pub(crate) write_lock: Mutex<()>,
    pub(crate) count: AtomicU64,
    pub(crate) dropped: AtomicBool,
    /// Search structures built from the store on first use (and again after an eviction).
    derived: RwLock<Option<Arc<Derived>>>,
}

/// Per-namespace search state derived from the store.
pub(crate) struct Derived {
    /// Loaded by the first text search or write that needs them (see [`DeferredStats`]).
    pub(crate) lexical: DeferredStats,
    pub(crate) vectors: RwLock<HashMap<String, SharedCollection>>,
}

impl NamespaceState {
    pub(crate) fn new(info: NamespaceInfo, count: u64) -> Self {
        NamespaceState {
            info,
            write_lock: Mutex::new(()),
            count: AtomicU64::new(count),
            dropped: AtomicBool::new(false),
            derived: RwLock::new(None),
        }
    }

    /// The derived state, if it is in memory.
    pub(crate) fn loaded(&self) -> Option<Arc<Derived>> {
        self.derived.read().clone()
    }

    /// Makes `derived` the namespace's state.
    pub(crate) fn install(&self, derived: Arc<Derived>) {
        *self.derived.write() = Some(derived);
    }
}

impl Evictable for NamespaceState {
    fn id(&self) -> u32 {
        self.info.id
    }

    /// Drops the derived state, stopping its graph builds; the next search rebuilds it from
    /// the store.
    fn unload(&self) {
        if let Some(derived) = self.derived.write().take() {
            derived.stop_graph_builds();
        }
    }
}

impl Derived {
    /// Stops the background graph builds of every collection (it is being let go); returns at
    /// once.
    pub(crate) fn stop_graph_builds(&self) {
        for collection in self.vectors.read().values() {
            stop_graph_builds(collection);
        }
    }

    /// Estimated heap bytes of the statistics and vector collections.
    pub(crate) fn heap_bytes(&self) -> usize {
        let vectors: usize = self
            .vectors
            .read()
            .values()
            .map(|c| c.read().heap_bytes())
            .sum();
        let lexical = self.lexical.get().map_or(0, |s| s.read().heap_bytes());
        lexical + vectors
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

    /// The name of every registered space: where a record's vectors can be.
    pub(crate) fn space_names(&self) -> Vec<String> {
        self.catalog.read().spaces.keys().cloned().collect()
    }

    /// The derived state of every namespace that has it in memory, with the namespace's id.
    pub(crate) fn loaded_derived(&self) -> Vec<(u32, Arc<Derived>)> {
        let namespaces: Vec<Arc<NamespaceState>> =
            self.catalog.read().namespaces.values().cloned().collect();
        namespaces
            .iter()
            .filter_map(|ns| Some((ns.info.id, ns.loaded()?)))
            .collect()
    }

    /// Commits the lexical index and forgets the change-log entries it now holds.
    pub(crate) fn commit_lexical(&self) -> Result<()> {
        if let Some(seq) = self.lexical.commit(|| self.sequencer.finished_through())? {
            self.store.trim_changes(seq)?;
        }
        Ok(())
    }

    /// Declares an embedding space (see [`crate::Engine::create_space`]).
    pub(crate) fn create_space(&self, space: Space) -> Result<Space> {
        let invalid = |reason| Error::InvalidSpace {
            space: space.name.clone(),
            reason,
        };
        if space.name.is_empty() {
            return Err(invalid("empty name"));
        }
        if space.name.len() > MAX_SPACE_NAME {
            return Err(invalid("name longer than 256 bytes"));
        }
        if space.dim == 0 {
            return Err(invalid("dimension 0"));
        }
        if space.dim > MAX_DIM {
            return Err(invalid("dimension above 65 536"));
        }
        let mut catalog = self.catalog.write();
        if let Some(existing) = catalog.spaces.get(&space.name) {
            if existing.dim != space.dim {
                return Err(Error::SpaceConflict {
                    space: space.name,
                    existing: existing.dim,
                    requested: space.dim,
                });
            }
            return Ok(existing.clone());
        }
        let store = &self.store;
        let mut batch = StoreBatch::default();
        batch.put(
            store.cf(Family::Meta)?,
            space_key(&space.name),
            codec::encode("space", &space)?,
        );
        store.write(batch)?;
        catalog.spaces.insert(space.name.clone(), space.clone());
        Ok(space)
    }
}
