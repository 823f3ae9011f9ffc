//! The ingest queue's schedule in memory: which job a free worker takes next.
//!
//! The queue itself is durable (one engine record per job, see [`crate::memory::ingest`]);
//! this is its in-memory mirror. Tenants are served round robin, so one tenant's backlog
//! never starves another; within a tenant jobs go in order, and two jobs of one owner (a
//! user's or an agent's memory) never run at once, so each owner's dialogs are memorized in
//! the order they were added.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::Bound;
use std::sync::Mutex;

use mb_engine::Record;
use tokio::sync::{oneshot, Notify};

use crate::memory::Owner;

/// One queued dialog.
#[derive(Debug, Clone)]
pub struct Job {
    /// Its record id in the tenant's queue namespace (also the dialog's number).
    pub id: u64,
    /// Whose memory it goes to.
    pub owner: Owner,
    /// The owner's namespace.
    pub namespace: String,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Found in the queue at start, or tried before: it may have been memorized without its
    /// mark (a crash, or a write after memorizing that failed), so its units are looked for.
    pub maybe_applied: bool,
}

/// What a waiter of a job learns: the memories it added, or why it failed for good.
pub type Outcome = Result<Vec<Record>, String>;

#[derive(Default)]
struct State {
    queued: BTreeMap<String, VecDeque<Job>>,
    busy: HashSet<String>,
    last_tenant: Option<String>,
    waiters: HashMap<u64, Vec<oneshot::Sender<Outcome>>>,
    failed: HashMap<String, usize>,
    stopping: bool,
}

/// The schedule (shared by the tools, which add and purge, and the workers, which take).
#[derive(Default)]
pub struct Scheduler {
    state: Mutex<State>,
    wake: Notify,
}

impl Scheduler {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves the schedule as it was: keep using it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a job at the end of its tenant's queue; with `wait`, returns where its outcome
    /// will be sent.
    pub fn push(&self, job: Job, wait: bool) -> Option<oneshot::Receiver<Outcome>> {
        let mut state = self.lock();
        let receiver = wait.then(|| {
            let (sender, receiver) = oneshot::channel();
            state.waiters.entry(job.id).or_default().push(sender);
            receiver
        });
        let tenant = job.owner.tenant.name().to_string();
        state.queued.entry(tenant).or_default().push_back(job);
        drop(state);
        self.wake.notify_one();
        receiver
    }

    /// Puts a job back at the front of its tenant's queue (a retry) and frees its owner.
    pub fn retry(&self, job: Job) {
        let mut state = self.lock();
        state.busy.remove(&job.namespace);
        let tenant = job.owner.tenant.name().to_string();
        state.queued.entry(tenant).or_default().push_front(job);
        drop(state);
        self.wake.notify_one();
    }

    /// The next job to run, fairly: the first runnable job of the tenant after the one served
    /// last (wrapping around). Its owner is busy until [`Scheduler::finish`]. `None` when
    /// nothing can run now (or the scheduler is stopping).
    pub fn take(&self) -> Option<Job> {
        let mut state = self.lock();
        if state.stopping {
            return None;
        }
        let start = state.last_tenant.clone();
        let order: Vec<String> = match &start {
            Some(last) => state
                .queued
                .range::<String, _>((Bound::Excluded(last), Bound::Unbounded))
                .chain(
                    state
                        .queued
                        .range::<String, _>((Bound::Unbounded, Bound::Included(last))),
                )
                .map(|(t, _)| t.clone())
                .collect(),
            None => state.queued.keys().cloned().collect(),
        };
        for tenant in order {
            let busy = &state.busy;
            let Some(position) = state
                .queued
                .get(&tenant)
                .and_then(|jobs| jobs.iter().position(|j| !busy.contains(&j.namespace)))
            else {
                continue;
            };
            let jobs = state.queued.get_mut(&tenant)?;
            let job = jobs.remove(position)?;
            if jobs.is_empty() {
                state.queued.remove(&tenant);
            }
            state.busy.insert(job.namespace.clone());
            state.last_tenant = Some(tenant);
            return Some(job);
        }
        None
    }

    /// Waits until a job may be runnable (or the scheduler stops); returns false once stopping.
    pub async fn wait_for_work(&self) -> bool {
        let notified = self.wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.lock().stopping {
            return false;
        }
        if self.has_runnable() {
            return true;
        }
        notified.await;
        !self.lock().stopping
    }

    fn has_runnable(&self) -> bool {
        let state = self.lock();
        state
            .queued
            .values()
            .flatten()
            .any(|j| !state.busy.contains(&j.namespace))
    }

    /// Ends a job: frees its owner, tells its waiters, counts a failure.
    pub fn finish(&self, job: &Job, outcome: Outcome) {
        let mut state = self.lock();
        state.busy.remove(&job.namespace);
        if outcome.is_err() {
            *state
                .failed
                .entry(job.owner.tenant.name().to_string())
                .or_default() += 1;
        }
        for waiter in state.waiters.remove(&job.id).unwrap_or_default() {
            let _ = waiter.send(outcome.clone());
        }
        drop(state);
        // Another worker may now run this owner's next job.
        self.wake.notify_waiters();
        self.wake.notify_one();
    }

    /// Whether anyone waits for job `id`.
    pub fn has_waiter(&self, id: u64) -> bool {
        self.lock().waiters.contains_key(&id)
    }

    /// Removes the queued jobs of `tenant` whose namespace `matches`; returns their ids.
    /// Their waiters learn that they were deleted.
    pub fn purge(&self, tenant: &str, matches: impl Fn(&str) -> bool) -> Vec<u64> {
        let mut state = self.lock();
        let mut removed = Vec::new();
        if let Some(jobs) = state.queued.get_mut(tenant) {
            jobs.retain(|j| {
                let purge = matches(&j.namespace);
                if purge {
                    removed.push(j.id);
                }
                !purge
            });
            if jobs.is_empty() {
                state.queued.remove(tenant);
            }
        }
        for id in &removed {
            for waiter in state.waiters.remove(id).unwrap_or_default() {
                let _ = waiter.send(Err("deleted before it was applied".into()));
            }
        }
        removed
    }

    /// Whether a job of a namespace that `matches` is running.
    pub fn running(&self, matches: impl Fn(&str) -> bool) -> bool {
        self.lock().busy.iter().any(|ns| matches(ns))
    }

    /// Waits (polling every 20 ms) until no job of a namespace that `matches` runs.
    pub async fn wait_idle(&self, matches: impl Fn(&str) -> bool) {
        while self.running(&matches) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Jobs of `tenant` waiting, running, and failed for good since the start.
    pub fn depth(&self, tenant: &str, owner_prefix: &str) -> (usize, usize, usize) {
        let state = self.lock();
        let queued = state.queued.get(tenant).map_or(0, VecDeque::len);
        let running = state
            .busy
            .iter()
            .filter(|ns| ns.starts_with(owner_prefix))
            .count();
        (
            queued,
            running,
            state.failed.get(tenant).copied().unwrap_or(0),
        )
    }

    /// Stops handing out jobs (the queued ones stay in the durable queue) and wakes every
    /// idle worker so it can exit.
    pub fn stop(&self) {
        self.lock().stopping = true;
        self.wake.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tenant::Tenant;

    fn job(id: u64, tenant: &str, user: &str) -> Job {
        let tenant = Tenant::new(tenant).unwrap();
        Job {
            id,
            namespace: format!("{}/{user}", tenant.memory_root()),
            owner: Owner {
                tenant,
                user_id: user.into(),
                agent_id: None,
            },
            attempts: 0,
            maybe_applied: false,
        }
    }

    #[test]
    fn tenants_take_turns_and_an_owner_runs_one_job_at_a_time() {
        let s = Scheduler::default();
        // Tenant a has a backlog of 4 jobs of one user; b and c have one each.
        for id in 1..=4 {
            s.push(job(id, "a", "u"), false);
        }
        s.push(job(5, "b", "v"), false);
        s.push(job(6, "c", "w"), false);
        let first = s.take().unwrap();
        assert_eq!(first.id, 1);
        // a's next job waits for its owner; b and c go first.
        assert_eq!(s.take().unwrap().id, 5);
        assert_eq!(s.take().unwrap().id, 6);
        assert!(s.take().is_none());
        s.finish(&first, Ok(Vec::new()));
        assert_eq!(s.take().unwrap().id, 2);
        assert_eq!(s.depth("a", "mcp/t/a/").0, 2);
        let purged = s.purge("a", |ns| ns.ends_with("/u"));
        assert_eq!(purged, vec![3, 4]);
        assert!(s.running(|ns| ns.ends_with("/u")));
    }
}
