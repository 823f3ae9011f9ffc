//! Snapshots read while the engine opens.
//!
//! Opening RocksDB keeps one core busy for most of an engine's open (8 ms of a 100k-record
//! store, `docs/stores.md`), and a reopened namespace's first search then spent about as long
//! again on its snapshots ([`crate::snapshot`]): mapping its vector file, checking its checksum
//! and parsing it ([`crate::vector::file`]), and decoding its BM25 statistics. The open starts
//! that work on threads of its own and the first search takes what they made:
//! - the vector files before the store opens (they do not need it), on the core RocksDB's open
//!   leaves idle;
//! - the statistics as soon as the store is open and found to match them, while the open
//!   goes on (the lexical index, the catalog).
//!
//! What is warmed, and how long it lives:
//! - The snapshots on disk at the open, which are those of the namespaces the last sessions
//!   kept in memory; vector files largest first, while their total fits the derived-state
//!   budget when one is set ([`crate::EngineOptions::derived_memory_budget`]), and statistics
//!   within the same budget.
//! - Trusted no more than a snapshot read later: a vector file's sequence number is still
//!   checked against the store's, and a file or statistics that failed their checks are
//!   reported as if they had just been read.
//! - Dropped when taken, and with the snapshots (the first write that changes records deletes
//!   them), so nothing warmed outlives its use.

use std::collections::HashMap;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use crate::error::Result;
use crate::lexical::LexicalStats;
use crate::vector::file::{self, Decoded};

/// A namespace's statistics snapshot as stored: its id, its bytes.
pub(crate) type StatsBytes = (u32, Vec<u8>);

/// The snapshots being read ahead: vector files by path, statistics by namespace.
pub(crate) struct Warmup {
    vectors: Warming<PathBuf, Result<Option<Decoded>>>,
    stats: Warming<u32, Option<LexicalStats>>,
    budget: u64,
}

impl Warmup {
    /// Nothing warmed.
    #[cfg(test)]
    pub(crate) fn none() -> Warmup {
        Warmup {
            vectors: Warming::idle(),
            stats: Warming::idle(),
            budget: 0,
        }
    }

    /// Starts reading the vector files in `dir` (which may not exist; none without one) whose
    /// total fits `budget` bytes (none: no limit), the largest first; the statistics follow
    /// once the store is open ([`Warmup::warm_stats`]), within the same budget.
    pub(crate) fn start(dir: Option<PathBuf>, budget: Option<usize>) -> Warmup {
        let budget = budget.map_or(u64::MAX, |b| b as u64);
        let vectors = match dir {
            Some(dir) => Warming::start(
                "mb-warm-vectors",
                move || fitting(vector_files(&dir), budget),
                |path: PathBuf| file::decode(&path, None),
            ),
            None => Warming::idle(),
        };
        Warmup {
            vectors,
            stats: Warming::idle(),
            budget,
        }
    }

    /// Starts decoding the statistics snapshots that `snapshots` reads (namespace, bytes),
    /// those that fit the budget, the largest first.
    pub(crate) fn warm_stats(
        &mut self,
        snapshots: impl FnOnce() -> Result<Vec<StatsBytes>> + Send + 'static,
    ) {
        let budget = self.budget;
        self.stats = Warming::start(
            "mb-warm-stats",
            move || match snapshots() {
                Ok(found) => {
                    let sized = found.into_iter().map(|(ns, b)| (b.len() as u64, ns, b));
                    fitting(sized.collect(), budget)
                }
                Err(e) => {
                    tracing::warn!("statistics snapshots not read ahead: {e}");
                    Vec::new()
                }
            },
            |bytes: Vec<u8>| LexicalStats::from_bytes(&bytes),
        );
    }

    /// What was made of the vector file at `path`, waiting for it if it is still being read;
    /// `None` if it was not planned, or was taken or dropped already.
    pub(crate) fn take_vectors(&self, path: &Path) -> Option<Result<Option<Decoded>>> {
        self.vectors.take(path)
    }

    /// Namespace `ns`'s statistics as decoded (`None` inside: they did not decode), waiting
    /// for them if need be; `None` if they were not planned, or were taken or dropped.
    pub(crate) fn take_stats(&self, ns: u32) -> Option<Option<LexicalStats>> {
        self.stats.take(&ns)
    }

    /// Drops everything read ahead and not taken, and stops the reading.
    pub(crate) fn discard(&self) {
        self.vectors.discard();
        self.stats.discard();
    }

    /// Waits until everything planned is read (or dropped).
    #[cfg(test)]
    pub(crate) fn wait(&self) {
        self.vectors.wait();
        self.stats.wait();
    }
}

/// Jobs planned and run one after the other on a thread of their own, each result kept under
/// its key until taken.
struct Warming<K, T> {
    shared: Arc<Shared<K, T>>,
    thread: Option<JoinHandle<()>>,
}

/// What a warming thread and the takers share.
struct Shared<K, T> {
    state: Mutex<State<K, T>>,
    /// Signalled when the plan is made and each time a job finishes.
    finished: Condvar,
}

struct State<K, T> {
    /// Whether the jobs are still being planned (a taker cannot tell yet whether its key
    /// will come).
    planning: bool,
    /// Set when the results are no longer wanted: no other job starts.
    stopped: bool,
    /// Each result still to be taken, or `None` while its job waits or runs.
    results: HashMap<K, Option<T>>,
}

impl<K: Hash + Eq + Clone + Send + 'static, T: Send + 'static> Warming<K, T> {
    fn idle() -> Warming<K, T> {
        Warming {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    planning: false,
                    stopped: false,
                    results: HashMap::new(),
                }),
                finished: Condvar::new(),
            }),
            thread: None,
        }
    }

    /// Runs `plan`, then `work` on each job it gave, in order, on a thread named `name`.
    fn start<J: Send + 'static>(
        name: &str,
        plan: impl FnOnce() -> Vec<(K, J)> + Send + 'static,
        work: impl Fn(J) -> T + Send + 'static,
    ) -> Warming<K, T> {
        let mut warming = Warming::idle();
        warming.shared.state.lock().planning = true;
        let shared = Arc::clone(&warming.shared);
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || shared.run(plan, work));
        match spawned {
            Ok(thread) => warming.thread = Some(thread),
            Err(e) => {
                tracing::warn!("no thread to read snapshots ahead: {e}");
                warming.shared.state.lock().planning = false;
            }
        }
        warming
    }

    fn take<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<T>
    where
        K: std::borrow::Borrow<Q>,
    {
        let mut state = self.shared.state.lock();
        loop {
            if state.stopped {
                return None;
            }
            match state.results.get(key) {
                Some(Some(_)) => return state.results.remove(key).flatten(),
                Some(None) => {}
                None if state.planning => {}
                None => return None,
            }
            self.shared.finished.wait(&mut state);
        }
    }

    fn discard(&self) {
        let mut state = self.shared.state.lock();
        state.stopped = true;
        state.results.clear();
        self.shared.finished.notify_all();
    }

    #[cfg(test)]
    fn wait(&self) {
        let mut state = self.shared.state.lock();
        while state.planning || state.results.values().any(Option::is_none) {
            self.shared.finished.wait(&mut state);
        }
    }
}

impl<K: Hash + Eq + Clone, T> Shared<K, T> {
    fn run<J>(&self, plan: impl FnOnce() -> Vec<(K, J)>, work: impl Fn(J) -> T) {
        // However the thread ends, takers stop waiting for what it did not do.
        let _finish = Finish(self);
        let jobs = plan();
        {
            let mut state = self.state.lock();
            state.planning = false;
            if !state.stopped {
                let keys = jobs.iter().map(|(key, _)| (key.clone(), None));
                state.results.extend(keys);
            }
        }
        self.finished.notify_all();
        for (key, job) in jobs {
            if self.state.lock().stopped {
                break;
            }
            let result = work(job);
            if let Some(slot) = self.state.lock().results.get_mut(&key) {
                *slot = Some(result);
            }
            self.finished.notify_all();
        }
    }
}

/// Ends a warming thread's plan and drops its unfinished jobs, when it returns or panics.
struct Finish<'a, K, T>(&'a Shared<K, T>);

impl<K, T> Drop for Finish<'_, K, T> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.planning = false;
        state.results.retain(|_, result| result.is_some());
        self.0.finished.notify_all();
    }
}

impl<K, T> Drop for Warming<K, T> {
    fn drop(&mut self) {
        self.shared.state.lock().stopped = true;
        if let Some(thread) = self.thread.take() {
            // The job running is finished and its result dropped; a panic there was a bug,
            // and the engine is closing anyway.
            let _ = thread.join();
        }
    }
}

/// The vector files of `dir` as (size, path, path) jobs.
fn vector_files(dir: &Path) -> Vec<(u64, PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let path = entry.path();
            let meta = entry.metadata().ok()?;
            (meta.is_file() && path.extension().is_some_and(|e| e == "vec"))
                .then(|| (meta.len(), path.clone(), path))
        })
        .collect()
}

/// The (key, job) of `sized` jobs, the largest first, while their total fits `budget` bytes.
fn fitting<K: Ord, J>(mut sized: Vec<(u64, K, J)>, budget: u64) -> Vec<(K, J)> {
    sized.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut total = 0u64;
    sized
        .into_iter()
        .filter(|(size, _, _)| {
            let fits = total.saturating_add(*size) <= budget;
            if fits {
                total += size;
            }
            fits
        })
        .map(|(_, key, job)| (key, job))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordId;
    use crate::vector::collection::VectorCollection;
    use crate::vector::seeded_unit;
    use crate::vector::source::MemorySource;

    /// Writes `n` vectors of 8 into `dir/{name}.vec` at sequence number `seq`; its size.
    fn vector_file(dir: &Path, name: &str, n: u64, seq: u64) -> u64 {
        let mut c = VectorCollection::new(8);
        for id in 0..n {
            c.upsert(RecordId(id), &seeded_unit(id, 8));
        }
        let path = dir.join(format!("{name}.vec"));
        file::write(&path, seq, &[("s", &c)]).unwrap();
        std::fs::metadata(&path).unwrap().len()
    }

    #[test]
    fn the_largest_files_that_fit_the_budget_are_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let large = vector_file(dir.path(), "1", 40, 7);
        let small = vector_file(dir.path(), "2", 3, 7);
        let middle = vector_file(dir.path(), "3", 20, 7);
        std::fs::write(dir.path().join("4.tmp"), b"not a vector file").unwrap();
        let warmup = Warmup::start(Some(dir.path().into()), Some((large + small) as usize));
        let path = |name: &str| dir.path().join(name);
        let decoded = warmup
            .take_vectors(&path("1.vec"))
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(decoded.seq(), 7);
        let spaces = decoded.attach(&MemorySource::none);
        assert_eq!(spaces["s"].len(), 40);
        assert!(warmup.take_vectors(&path("1.vec")).is_none(), "taken once");
        assert!(
            warmup.take_vectors(&path("3.vec")).is_none(),
            "{middle} bytes do not fit beside the largest"
        );
        assert!(
            warmup.take_vectors(&path("2.vec")).unwrap().is_ok(),
            "the small one does"
        );
        assert!(warmup.take_vectors(&path("4.tmp")).is_none());
        assert!(Warmup::start(Some(path("missing")), None)
            .take_vectors(&path("missing/1.vec"))
            .is_none());
    }

    #[test]
    fn a_damaged_file_is_reported_to_its_taker() {
        let dir = tempfile::tempdir().unwrap();
        vector_file(dir.path(), "1", 10, 3);
        let path = dir.path().join("1.vec");
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        let warmup = Warmup::start(Some(dir.path().into()), None);
        assert!(warmup.take_vectors(&path).unwrap().is_err());
    }

    #[test]
    fn discarded_files_are_not_given() {
        let dir = tempfile::tempdir().unwrap();
        vector_file(dir.path(), "1", 10, 3);
        let warmup = Warmup::start(Some(dir.path().into()), None);
        warmup.wait();
        warmup.discard();
        assert!(warmup.take_vectors(&dir.path().join("1.vec")).is_none());
    }
}
