//! Progress as JSON lines in a file, for a program following a run it launched (`serve`): the
//! same counts the progress bars show, which are hidden when standard error is not a terminal.
//!
//! Off unless `--progress-file FILE` names the file. Events, one per line:
//! `{"event":"start","bar":1,"label":..,"unit":"cases","len":10}` (`len` null when open-ended),
//! `{"event":"tick","bar":1,"pos":3,"calls":..,"input_tokens":..,"output_tokens":..,"fallbacks":..}`
//! (at most twice a second per bar, and the last one always), `{"event":"end","bar":1,"pos":10}`
//! and `{"event":"run_dir","path":..}` when a run directory is created or resumed. A line is
//! written whole under a lock; a failed write is logged once and the run goes on.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mb_llm::ModelUsage;
use parking_lot::Mutex;
use serde_json::{json, Value};

use crate::error::{file_error, HarnessError};

/// The file events go to, once opened.
static FILE: OnceLock<Mutex<File>> = OnceLock::new();
/// The next bar's number.
static NEXT_BAR: AtomicU64 = AtomicU64::new(1);
/// Whether a failed write was logged already.
static WARNED: AtomicBool = AtomicBool::new(false);

/// Shortest time between two ticks of a bar.
const TICK: Duration = Duration::from_millis(500);

/// Appends this process's progress events to `path` (created if missing).
pub fn record_to(path: &Path) -> Result<(), HarnessError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| file_error(path, e))?;
    let _ = FILE.set(Mutex::new(file));
    Ok(())
}

/// Whether events are recorded.
pub fn active() -> bool {
    FILE.get().is_some()
}

/// Records that this process works in run directory `dir`.
pub fn run_dir(dir: &Path) {
    let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    write(&json!({"event": "run_dir", "path": path.display().to_string()}));
}

fn write(event: &Value) {
    let Some(file) = FILE.get() else {
        return;
    };
    let mut line = event.to_string();
    line.push('\n');
    if let Err(e) = file.lock().write_all(line.as_bytes()) {
        if !WARNED.swap(true, Ordering::Relaxed) {
            tracing::warn!("cannot record progress: {e}");
        }
    }
}

/// One bar's events.
pub struct BarEvents {
    bar: u64,
    /// When the last tick was written.
    last: Mutex<Option<Instant>>,
}

impl BarEvents {
    /// Records a bar's start; `None` when events are not recorded.
    pub fn start(label: &str, unit: &str, len: Option<u64>) -> Option<BarEvents> {
        if !active() {
            return None;
        }
        let bar = NEXT_BAR.fetch_add(1, Ordering::Relaxed);
        write(&json!({"event": "start", "bar": bar, "label": label, "unit": unit, "len": len}));
        Some(BarEvents {
            bar,
            last: Mutex::new(None),
        })
    }

    /// Records the bar at `pos` with `usage` since it started, unless one was written less
    /// than half a second ago and `force` is false.
    pub fn tick(&self, pos: u64, usage: &ModelUsage, force: bool) {
        {
            let mut last = self.last.lock();
            if !force && last.is_some_and(|at| at.elapsed() < TICK) {
                return;
            }
            *last = Some(Instant::now());
        }
        write(&json!({
            "event": "tick",
            "bar": self.bar,
            "pos": pos,
            "calls": usage.calls,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "fallbacks": usage.fallback_count(),
        }));
    }

    /// Records the bar's end at `pos`.
    pub fn end(&self, pos: u64) {
        write(&json!({"event": "end", "bar": self.bar, "pos": pos}));
    }
}
