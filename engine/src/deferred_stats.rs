//! A namespace's BM25 statistics, loaded when first needed rather than with its vectors.
//!
//! A reopened namespace's first vector search used to wait for its statistics as well as its
//! vectors, and once the vector file was read ahead at the open, decoding the statistics (4–5
//! ms of a 100k-record namespace, `docs/history.md`) was most of that wait. Vector searches never
//! read them, so they are loaded by the first text search or write that does.
//!
//! Loads are ordered with writes (`Inner::invalidate_snapshots`, in `recovery.rs`): a write
//! loads its namespace's statistics before it commits, since its changes are then applied to
//! them and they must be those from before it; and while snapshots are on disk, it loads every
//! loaded namespace's too, since it deletes the snapshots they would otherwise be decoded from.

use std::sync::OnceLock;

use parking_lot::{Mutex, RwLock, RwLockWriteGuard};

use crate::error::Result;
use crate::lexical::stats::Removed;
use crate::lexical::{LexicalStats, Term};

/// Statistics loaded, or to be loaded at first need.
pub(crate) struct DeferredStats {
    loaded: OnceLock<RwLock<LexicalStats>>,
    /// Held while loading, so that one caller loads and the others wait for it.
    loading: Mutex<()>,
}

impl DeferredStats {
    /// Statistics already at hand.
    #[cfg(test)]
    pub(crate) fn loaded(stats: LexicalStats) -> DeferredStats {
        DeferredStats {
            loaded: OnceLock::from(RwLock::new(stats)),
            loading: Mutex::new(()),
        }
    }

    /// Statistics to be loaded at first need.
    pub(crate) fn pending() -> DeferredStats {
        DeferredStats {
            loaded: OnceLock::new(),
            loading: Mutex::new(()),
        }
    }

    /// The statistics, if loaded.
    pub(crate) fn get(&self) -> Option<&RwLock<LexicalStats>> {
        self.loaded.get()
    }

    /// The statistics, loaded by `load` first if they are not yet; a failed load leaves them
    /// to be loaded again.
    pub(crate) fn get_or_load(
        &self,
        load: impl FnOnce() -> Result<LexicalStats>,
    ) -> Result<&RwLock<LexicalStats>> {
        if let Some(stats) = self.loaded.get() {
            return Ok(stats);
        }
        let _loading = self.loading.lock();
        if let Some(stats) = self.loaded.get() {
            return Ok(stats);
        }
        let stats = load()?;
        Ok(self.loaded.get_or_init(|| RwLock::new(stats)))
    }

    /// Changes the statistics if they are loaded. A write loads them before it commits, so
    /// they always are for one; were they not, there would be nothing to change: they would
    /// be loaded later from a store that has the write.
    pub(crate) fn write(&self) -> StatsWriter<'_> {
        StatsWriter(self.loaded.get().map(RwLock::write))
    }
}

/// Changes to loaded statistics (none when they are not loaded, see [`DeferredStats::write`]).
pub(crate) struct StatsWriter<'a>(Option<RwLockWriteGuard<'a, LexicalStats>>);

impl StatsWriter<'_> {
    /// Counts a new document of `terms`.
    pub(crate) fn add(&mut self, terms: &[Term]) {
        if let Some(stats) = &mut self.0 {
            stats.add(terms);
        }
    }

    /// Uncounts the documents whose terms `removed` counts.
    pub(crate) fn remove(&mut self, removed: &Removed) {
        if let Some(stats) = &mut self.0 {
            stats.remove(removed);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::error::Error;
    use crate::Analyzer;

    fn stats_of(texts: &[&str]) -> LexicalStats {
        let mut stats = LexicalStats::default();
        for text in texts {
            stats.add(&Analyzer::Standard.analyze(text));
        }
        stats
    }

    #[test]
    fn pending_statistics_load_once_and_take_no_changes_before() {
        let deferred = DeferredStats::pending();
        assert!(deferred.get().is_none());
        deferred
            .write()
            .add(&Analyzer::Standard.analyze("grey wolf"));
        let failed = deferred.get_or_load(|| Err(Error::Background("no store".into())));
        assert!(failed.is_err());
        assert!(
            deferred.get().is_none(),
            "a failed load leaves them pending"
        );
        let loads = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let stats = deferred.get_or_load(|| {
                        loads.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        Ok(stats_of(&["red fox", "blue fox"]))
                    });
                    assert_eq!(stats.map(|s| s.read().num_docs()).ok(), Some(2));
                });
            }
        });
        assert_eq!(
            loads.load(Ordering::SeqCst),
            1,
            "one load, the others waited"
        );
        let loaded = deferred.get().map(|s| s.read().clone());
        assert_eq!(loaded, Some(stats_of(&["red fox", "blue fox"])));
    }

    #[test]
    fn loaded_statistics_take_changes() {
        let deferred = DeferredStats::loaded(stats_of(&["red fox"]));
        let mut writer = deferred.write();
        writer.add(&Analyzer::Standard.analyze("grey wolf"));
        let mut removed = Removed::default();
        removed.document(Analyzer::Standard, "red fox");
        writer.remove(&removed);
        drop(writer);
        let stats = deferred.get_or_load(|| Err(Error::Background("loaded already".into())));
        assert_eq!(
            stats.map(|s| s.read().clone()).ok(),
            Some(stats_of(&["grey wolf"]))
        );
    }
}
