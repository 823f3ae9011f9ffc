//! Launched runs ("jobs"): started as this same binary in a process group of their own,
//! followed, stopped and resumed.
//!
//! A job's folder (`<runs>/.serve/jobs/<id>/`) holds `job.json` (its arguments, state and
//! times, and the *names* of the API keys it was given, never their values), `output.log`
//! (its standard output and error) and `progress.jsonl` (its `--progress-file`). Keys live in
//! the server's memory only, for a resume; they reach the run through its environment.
//! One job runs at a time: runs share the engine store, which one process holds.
//! Stopping sends SIGTERM to the job's group (the run prints how to resume and a local model
//! server goes with it), then SIGKILL after [`STOP_GRACE`]. A job found running when the
//! server starts is `interrupted` once its process is gone, and can be resumed. The HTTP
//! routes are in [`routes`].

mod routes;

pub(crate) use routes::{launch, list, one, resume, stop};

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::confine::{Runs, SERVER_FOLDER};
use super::progress::Progress;
use super::reply::{ApiError, ApiResult};
use crate::error::{file_error, HarnessError};
use crate::run::resume_command::shell_word;

/// How long a stopped job has to end before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Ended jobs kept by default (`serve --keep-jobs`): the folders (logs, progress) of older ones
/// are deleted when the server opens and when a job starts. Their runs stay where they are.
pub(crate) const KEPT_JOBS: u32 = 200;

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum JobState {
    /// Its process runs.
    Running,
    /// Asked to stop, not ended yet.
    Stopping,
    /// Ended after a stop.
    Stopped,
    /// Ended by itself, successfully.
    Exited,
    /// Ended by itself with an error.
    Failed,
    /// Its server went away while it ran.
    Interrupted,
}

impl JobState {
    /// Whether its process may still run.
    pub fn is_live(self) -> bool {
        matches!(self, JobState::Running | JobState::Stopping)
    }
}

/// What `job.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct JobRecord {
    id: String,
    pub state: JobState,
    exit_code: Option<i32>,
    started: String,
    ended: Option<String>,
    /// The subcommand and its arguments.
    argv: Vec<String>,
    /// The names of the API keys given.
    keys_given: Vec<String>,
    pid: u32,
}

/// A job as the server holds it.
struct Job {
    record: JobRecord,
    /// The keys' values, for a resume (lost when the server stops).
    keys: BTreeMap<String, String>,
}

/// The jobs of this runs directory.
pub(crate) struct Jobs {
    /// `<runs>/.serve/jobs`.
    dir: PathBuf,
    /// The runs directory, to name run directories.
    root: PathBuf,
    /// Where launched runs write and what they read.
    store: PathBuf,
    data: Option<PathBuf>,
    table: Arc<Mutex<BTreeMap<String, Job>>>,
    next: AtomicU64,
    /// Ended jobs kept ([`KEPT_JOBS`] by default).
    keep: usize,
}

impl Jobs {
    /// The jobs recorded under `runs`, the newest `keep` ended ones kept; those that were
    /// running are interrupted (or watched until they end, when their process still runs).
    pub fn open(
        runs: &Runs,
        store: &Path,
        data: Option<&Path>,
        keep: usize,
    ) -> Result<Jobs, HarnessError> {
        let dir = runs.root().join(SERVER_FOLDER).join("jobs");
        std::fs::create_dir_all(&dir).map_err(|e| file_error(&dir, e))?;
        let table: Arc<Mutex<BTreeMap<String, Job>>> = Arc::default();
        for entry in std::fs::read_dir(&dir)
            .map_err(|e| file_error(&dir, e))?
            .flatten()
        {
            let path = entry.path().join("job.json");
            let Ok(mut record) = mb_eval::read_json::<JobRecord>(&path) else {
                continue;
            };
            if record.state.is_live() {
                if is_alive(record.pid) {
                    watch_orphan(table.clone(), dir.clone(), record.id.clone(), record.pid);
                } else {
                    record.state = JobState::Interrupted;
                    write_record(&dir, &record);
                }
            }
            let job = Job {
                record,
                keys: BTreeMap::new(),
            };
            table.lock().insert(job.record.id.clone(), job);
        }
        prune(&mut table.lock(), &dir, keep);
        Ok(Jobs {
            dir,
            root: runs.root().to_path_buf(),
            store: store.to_path_buf(),
            data: data.map(Path::to_path_buf),
            table,
            next: AtomicU64::new(1),
            keep,
        })
    }

    /// A job's folder.
    pub fn folder(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// Starts `argv` with `keys` in its environment; refused while a job runs.
    fn start(&self, argv: Vec<String>, keys: BTreeMap<String, String>) -> ApiResult<String> {
        let mut table = self.table.lock();
        if let Some(live) = table.values().find(|j| j.record.state.is_live()) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!(
                    "a job is running already: {} (one at a time: runs share the store)",
                    live.record.id
                ),
            ));
        }
        prune(&mut table, &self.dir, self.keep);
        let stamp = mb_core::clock::utc_timestamp();
        let id = format!("{stamp}-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let started = iso_time(&stamp);
        let folder = self.folder(&id);
        std::fs::create_dir_all(&folder).map_err(|e| ApiError::internal(file_error(&folder, e)))?;
        let log_path = folder.join("output.log");
        let log = std::fs::File::create(&log_path)
            .map_err(|e| ApiError::internal(file_error(&log_path, e)))?;
        let err = log.try_clone().map_err(ApiError::internal)?;
        let exe = std::env::current_exe().map_err(ApiError::internal)?;
        let mut command = Command::new(exe);
        command
            .args(&argv)
            .arg("--progress-file")
            .arg(folder.join("progress.jsonl"))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .envs(&keys)
            .process_group(0);
        if std::env::var_os("RUST_LOG").is_none() {
            command.env("RUST_LOG", "info");
        }
        let mut child = command.spawn().map_err(ApiError::internal)?;
        let record = JobRecord {
            id: id.clone(),
            state: JobState::Running,
            exit_code: None,
            started,
            ended: None,
            argv,
            keys_given: keys.keys().cloned().collect(),
            pid: child.id(),
        };
        write_record(&self.dir, &record);
        table.insert(id.clone(), Job { record, keys });
        drop(table);
        let (table, dir, reaped) = (self.table.clone(), self.dir.clone(), id.clone());
        std::thread::spawn(move || {
            let status = child.wait();
            finish(&table, &dir, &reaped, status.ok().and_then(|s| s.code()));
        });
        Ok(id)
    }

    /// Asks job `id` to stop.
    fn stop(&self, id: &str) -> ApiResult<()> {
        let pid = {
            let mut table = self.table.lock();
            let job = table
                .get_mut(id)
                .ok_or_else(|| ApiError::missing("no such job"))?;
            if job.record.state != JobState::Running {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    "the job is not running",
                ));
            }
            job.record.state = JobState::Stopping;
            write_record(&self.dir, &job.record);
            job.record.pid
        };
        signal_group(pid, libc::SIGTERM);
        let table = self.table.clone();
        let id = id.to_string();
        std::thread::spawn(move || {
            std::thread::sleep(STOP_GRACE);
            let still = table
                .lock()
                .get(&id)
                .is_some_and(|j| j.record.state == JobState::Stopping);
            if still {
                signal_group(pid, libc::SIGKILL);
            }
        });
        Ok(())
    }

    /// Stops every running job and waits (a bounded time) for them to end.
    pub fn stop_all(&self) {
        let live: Vec<String> = self
            .table
            .lock()
            .values()
            .filter(|j| j.record.state == JobState::Running)
            .map(|j| j.record.id.clone())
            .collect();
        for id in &live {
            let _ = self.stop(id);
        }
        let deadline = std::time::Instant::now() + STOP_GRACE + Duration::from_secs(1);
        while std::time::Instant::now() < deadline
            && self.table.lock().values().any(|j| j.record.state.is_live())
        {
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The record of job `id`.
    pub fn record(&self, id: &str) -> Option<JobRecord> {
        self.table.lock().get(id).map(|j| j.record.clone())
    }

    /// Job `id` as the API shows it.
    pub fn view(&self, id: &str) -> Option<Value> {
        let (record, held) = {
            let table = self.table.lock();
            let job = table.get(id)?;
            (
                job.record.clone(),
                job.keys.keys().cloned().collect::<Vec<_>>(),
            )
        };
        let run_dirs = self.run_dirs(id);
        let resumable = matches!(
            record.state,
            JobState::Stopped | JobState::Failed | JobState::Interrupted
        ) && run_dirs.len() == 1;
        let keys_needed: Vec<&String> = record
            .keys_given
            .iter()
            .filter(|k| !held.contains(k))
            .collect();
        let command: Vec<String> = record.argv.iter().map(|w| shell_word(w)).collect();
        Some(json!({
            "id": record.id,
            "state": record.state,
            "exit_code": record.exit_code,
            "started": record.started,
            "ended": record.ended,
            "command": format!("mb-harness {}", command.join(" ")),
            "run_dirs": run_dirs,
            "resumable": resumable,
            "keys_needed": keys_needed,
        }))
    }

    /// The run directories of the jobs that run now (absolute).
    pub fn live_run_dirs(&self) -> Vec<String> {
        let live: Vec<String> = self
            .table
            .lock()
            .values()
            .filter(|j| j.record.state.is_live())
            .map(|j| j.record.id.clone())
            .collect();
        live.iter()
            .flat_map(|id| Progress::read(&self.folder(id).join("progress.jsonl")).run_dirs)
            .collect()
    }

    /// The run directories job `id` made or resumed, named under the runs directory.
    pub fn run_dirs(&self, id: &str) -> Vec<String> {
        self.run_names(&Progress::read(&self.folder(id).join("progress.jsonl")).run_dirs)
    }

    /// Run directories as a progress file announces them (absolute), named under the runs
    /// directory.
    pub fn run_names(&self, announced: &[String]) -> Vec<String> {
        announced
            .iter()
            .filter_map(|p| Path::new(p).strip_prefix(&self.root).ok())
            .filter_map(|p| p.to_str().map(str::to_string))
            .collect()
    }
}

/// Records how job `id` ended.
fn finish(table: &Mutex<BTreeMap<String, Job>>, dir: &Path, id: &str, code: Option<i32>) {
    let mut table = table.lock();
    if let Some(job) = table.get_mut(id) {
        job.record.state = match (job.record.state, code) {
            (JobState::Stopping, _) => JobState::Stopped,
            (_, Some(0)) => JobState::Exited,
            (JobState::Interrupted, _) => JobState::Interrupted,
            _ => JobState::Failed,
        };
        job.record.exit_code = code;
        job.record.ended = Some(iso_time(&mb_core::clock::utc_timestamp()));
        write_record(dir, &job.record);
    }
}

/// Deletes the oldest ended jobs past the newest `keep`: their folders, then their entries (a
/// folder that cannot be deleted keeps its entry, and is tried again next time).
fn prune(table: &mut BTreeMap<String, Job>, dir: &Path, keep: usize) {
    let mut ended: Vec<&JobRecord> = table
        .values()
        .map(|j| &j.record)
        .filter(|r| !r.state.is_live())
        .collect();
    // Ids are `<start time>-<n>`: by start, then by n as a number.
    ended.sort_by(|a, b| (&a.started, a.id.len(), &a.id).cmp(&(&b.started, b.id.len(), &b.id)));
    let excess = ended.len().saturating_sub(keep);
    let old: Vec<String> = ended[..excess].iter().map(|r| r.id.clone()).collect();
    for id in old {
        let folder = dir.join(&id);
        match std::fs::remove_dir_all(&folder) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!("cannot delete the old job folder {}: {e}", folder.display());
                continue;
            }
        }
        table.remove(&id);
    }
}

/// Follows a job whose process outlived the server that started it, until it ends.
fn watch_orphan(table: Arc<Mutex<BTreeMap<String, Job>>>, dir: PathBuf, id: String, pid: u32) {
    std::thread::spawn(move || {
        while is_alive(pid) {
            std::thread::sleep(Duration::from_secs(1));
        }
        if let Some(job) = table.lock().get_mut(&id) {
            job.record.state = JobState::Interrupted;
        }
        finish(&table, &dir, &id, None);
    });
}

/// A run-directory stamp (`2026-12-07-15-31-46`) as ISO 8601 UTC (`2026-12-07T15:31:46Z`),
/// which browsers read.
fn iso_time(stamp: &str) -> String {
    match (stamp.get(..10), stamp.get(11..)) {
        (Some(date), Some(time)) => format!("{date}T{}Z", time.replace('-', ":")),
        _ => stamp.to_string(),
    }
}

fn write_record(dir: &Path, record: &JobRecord) {
    let path = dir.join(&record.id).join("job.json");
    let written = serde_json::to_vec_pretty(record)
        .map_err(|e| e.to_string())
        .and_then(|bytes| {
            mb_core::atomic_file::write_atomic(&path, &bytes).map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        tracing::warn!("serve: cannot record job {}: {e}", record.id);
    }
}

fn is_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks that the process exists; it takes two integers
    // and touches no memory of ours.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Sends `signal` to the process group a job leads (started with `process_group(0)`).
fn signal_group(pid: u32, signal: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill takes two integers and touches no memory of ours; a negative pid names the
    // job's own process group, which holds only the job and what it started.
    unsafe {
        libc::kill(-pid, signal);
    }
}

#[cfg(test)]
mod tests;
