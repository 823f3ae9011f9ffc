//! Which namespaces keep their derived search state in memory.
//!
//! An agent platform keeps one namespace per user: most are idle at any time, yet each one
//! searched once would otherwise hold its BM25 statistics and vector arenas until the engine
//! closes. With [`EngineOptions::derived_memory_budget`](crate::EngineOptions) set, the derived
//! state of the least recently searched namespaces is dropped whenever the resident total goes
//! over the budget; a later search rebuilds it from the store (the source of truth), so
//! eviction never loses data. Sizes are estimates of the heap the structures hold.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// A namespace whose derived state can be dropped (the engine's namespace state; kept abstract
/// here so that residency knows nothing else of it).
pub(crate) trait Evictable: Send + Sync {
    /// The namespace's id.
    fn id(&self) -> u32;
    /// Drops the derived state.
    fn unload(&self);
}

/// The resident namespaces in least-recently-used order, and their sizes.
pub(crate) struct Residency {
    budget: Option<usize>,
    lru: Mutex<Lru>,
    evictions: AtomicU64,
}

#[derive(Default)]
struct Lru {
    /// Tick of each namespace's last use → its id.
    order: BTreeMap<u64, u32>,
    /// Id → (last tick, estimated bytes, the namespace).
    entries: HashMap<u32, (u64, usize, Arc<dyn Evictable>)>,
    total: usize,
    tick: u64,
}

/// What is resident now ([`crate::Engine::resident`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResidentState {
    /// Namespaces whose derived state is in memory.
    pub namespaces: usize,
    /// Estimated bytes of that state.
    pub bytes: usize,
    /// Namespaces evicted since the engine opened.
    pub evictions: u64,
}

impl Residency {
    /// Tracks residency under `budget` bytes (`None`: no limit, nothing tracked).
    pub(crate) fn new(budget: Option<usize>) -> Residency {
        Residency {
            budget,
            lru: Mutex::new(Lru::default()),
            evictions: AtomicU64::new(0),
        }
    }

    /// Records a use of `ns`, whose derived state now takes `bytes()`, then evicts the least
    /// recently used others until the total fits the budget (`ns` itself stays, even alone
    /// over it). Without a budget it does nothing, not even measure.
    pub(crate) fn touch<N: Evictable + 'static>(&self, ns: &Arc<N>, bytes: impl FnOnce() -> usize) {
        let Some(budget) = self.budget else {
            return;
        };
        let bytes = bytes();
        let victims = {
            let mut lru = self.lru.lock();
            lru.tick += 1;
            let tick = lru.tick;
            let id = ns.id();
            if let Some((old_tick, old_bytes, _)) = lru.entries.remove(&id) {
                lru.order.remove(&old_tick);
                lru.total -= old_bytes;
            }
            lru.order.insert(tick, id);
            let evictable: Arc<dyn Evictable> = ns.clone();
            lru.entries.insert(id, (tick, bytes, evictable));
            lru.total += bytes;
            let mut victims = Vec::new();
            while lru.total > budget {
                let Some((&oldest, &victim)) = lru.order.iter().next() else {
                    break;
                };
                if victim == id {
                    break;
                }
                lru.order.remove(&oldest);
                if let Some((_, size, state)) = lru.entries.remove(&victim) {
                    lru.total -= size;
                    victims.push(state);
                }
            }
            victims
        };
        for victim in &victims {
            victim.unload();
        }
        self.evictions
            .fetch_add(victims.len() as u64, Ordering::Relaxed);
    }

    /// Forgets a dropped namespace.
    pub(crate) fn forget(&self, id: u32) {
        let mut lru = self.lru.lock();
        if let Some((tick, bytes, _)) = lru.entries.remove(&id) {
            lru.order.remove(&tick);
            lru.total -= bytes;
        }
    }

    /// Namespaces evicted since the engine opened.
    pub(crate) fn evictions(&self) -> u64 {
        self.evictions.load(Ordering::Relaxed)
    }
}
