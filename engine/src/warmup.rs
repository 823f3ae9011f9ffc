//! The BM25 statistics snapshots, decoded while the engine opens.
//!
//! A reopened namespace's first text search needs its statistics, and decoding a 100k-record
//! namespace's snapshot takes a few milliseconds ([`crate::snapshot`]). Once the store and the
//! lexical index are open and the snapshots found to match the store, the open starts decoding
//! them on a thread of its own and returns; the first search takes what it made. (Started
//! while the store was still opening, the decode slowed the open by 0.1–0.2 ms.)
//!
//! The vector files were read ahead here too, from before the store opened, until the
//! thread reading them slowed the open more than it sped up the first vector search, with no
//! measurable gain in the first answer (`docs/history.md` has the numbers). The first
//! vector search decodes the file itself.
//!
//! What is decoded, and how long it lives:
//! - The snapshots in the store at the open, which are those of the namespaces the last
//!   sessions kept in memory; the largest first, while their total fits the derived-state
//!   budget when one is set ([`crate::EngineOptions::derived_memory_budget`]).
//! - Trusted no more than a snapshot read later: statistics that failed to decode are
//!   reported as if they had just been read.
//! - Dropped when taken, and with the snapshots (the first write that changes records deletes
//!   them), so nothing decoded outlives its use.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use crate::error::Result;
use crate::lexical::LexicalStats;

/// A namespace's statistics snapshot as stored: its id, its bytes.
pub(crate) type StatsBytes = (u32, Vec<u8>);

/// The statistics snapshots being decoded, by namespace.
pub(crate) struct Warmup {
    stats: Warming<u32, Option<LexicalStats>>,
    budget: u64,
}

impl Warmup {
    /// Nothing decoded yet: [`Warmup::warm_stats`] starts it, within `budget` bytes (none: no
    /// limit).
    pub(crate) fn new(budget: Option<usize>) -> Warmup {
        Warmup {
            stats: Warming::idle(),
            budget: budget.map_or(u64::MAX, |b| b as u64),
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

    /// Namespace `ns`'s statistics as decoded (`None` inside: they did not decode), waiting
    /// for them if need be; `None` if they were not planned, or were taken or dropped.
    pub(crate) fn take_stats(&self, ns: u32) -> Option<Option<LexicalStats>> {
        self.stats.take(&ns)
    }

    /// Drops everything decoded and not taken, and stops the decoding.
    pub(crate) fn discard(&self) {
        self.stats.discard();
    }

    /// Waits until everything planned is decoded (or dropped).
    #[cfg(test)]
    pub(crate) fn wait(&self) {
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

    #[test]
    fn the_largest_jobs_that_fit_the_budget_are_planned_largest_first() {
        let sized = vec![(40, 'a', 1), (3, 'b', 2), (20, 'c', 3), (3, 'd', 4)];
        assert_eq!(fitting(sized.clone(), 43), vec![('a', 1), ('b', 2)]);
        assert_eq!(
            fitting(sized.clone(), 46),
            vec![('a', 1), ('b', 2), ('d', 4)]
        );
        assert_eq!(fitting(sized.clone(), 2), vec![]);
        assert_eq!(fitting(sized, u64::MAX).len(), 4);
    }

    #[test]
    fn results_are_taken_once_and_unplanned_keys_are_not_waited_for() {
        let warming = Warming::start("test-warm", || vec![(1, 10), (2, 20)], |n: i32| n + 1);
        assert_eq!(warming.take(&2), Some(21));
        assert_eq!(warming.take(&2), None, "taken once");
        assert_eq!(warming.take(&3), None, "never planned");
        assert_eq!(warming.take(&1), Some(11));
    }

    #[test]
    fn discarded_results_are_not_given() {
        let warming = Warming::start("test-warm", || vec![(1, 10)], |n: i32| n + 1);
        warming.wait();
        warming.discard();
        assert_eq!(warming.take(&1), None);
    }

    #[test]
    fn a_job_that_panics_leaves_no_taker_waiting() {
        let warming = Warming::start(
            "test-warm",
            || vec![(1, 0), (2, 1)],
            |n: i32| if n == 0 { panic!("a bug in a job") } else { n },
        );
        assert_eq!(warming.take(&2), None, "the panic ended the thread");
        assert_eq!(warming.take(&1), None);
    }
}
