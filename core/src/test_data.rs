//! Tests that need what a checkout may lack (`../shared/data`, the set-up venv's Python tools).
//!
//! Such a test must never pass silently: under CI (the `CI` variable set) a missing input is a
//! failure, since CI provides it; elsewhere the test prints one `skipped: …` line and records it
//! in `target/skipped-tests.log`, which `scripts/test-python.sh` counts at the end of the README's
//! test command (`scripts/setup.sh` clears it at the start).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Ends a test that cannot run because `reason` (e.g. "…/locomo10-dev.json is absent"): a panic
/// under CI, else one `skipped:` line, recorded. Call it and return.
pub fn skip(reason: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("{reason}; CI must provide it (run bash scripts/setup.sh, keep ../shared/data)");
    }
    eprintln!("skipped: {reason}");
    if let Some(log) = skip_log() {
        let line = format!("{}: {reason}\n", test_name());
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if let Err(e) = appended {
            eprintln!("could not record the skip in {}: {e}", log.display());
        }
    }
}

/// Upstream MemoryBench's checkout beside the project (`../shared/upstream/MemoryBench`), for
/// the tests that compare with upstream's own code, or `None` after [`skip`].
pub fn upstream_checkout() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/upstream/MemoryBench");
    if !dir.join("memorybench.py").is_file() {
        skip(&format!(
            "the upstream checkout {} is absent",
            dir.display()
        ));
        return None;
    }
    Some(dir)
}

/// What a test needs to run upstream's own Python: the checkout, the differential venv's
/// interpreter (`scripts/setup.sh` builds `.cache/upstream-venv`) and the import shims of
/// `scripts/upstream/shims` for the heavy packages upstream imports and never calls.
#[derive(Debug, Clone)]
pub struct UpstreamPython {
    /// Upstream MemoryBench's checkout.
    pub checkout: PathBuf,
    /// The venv's Python.
    pub python: PathBuf,
    /// The folder of the import shims.
    pub shims: PathBuf,
}

/// What every script [`UpstreamPython::script`] runs starts with: `root` is the checkout (the
/// first argument), and upstream's heavy imports are shimmed (the second).
const UPSTREAM_PRELUDE: &str = "import sys
root, shims = sys.argv[1], sys.argv[2]
sys.path.insert(0, shims)
import heavy_import_shims
heavy_import_shims.install()
";

impl UpstreamPython {
    /// The checkout and the venv, or `None` after [`skip`].
    pub fn find() -> Option<UpstreamPython> {
        let checkout = upstream_checkout()?;
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let python = root.join(".cache/upstream-venv/bin/python");
        if !python.is_file() {
            skip(&format!(
                "{} is absent (bash scripts/setup.sh builds the venv)",
                python.display()
            ));
            return None;
        }
        Some(UpstreamPython {
            checkout,
            python,
            shims: root.join("scripts/upstream/shims"),
        })
    }

    /// `python -c PRELUDE+script checkout shims`: `script` with `root` naming the checkout and
    /// the heavy imports shimmed.
    pub fn script(&self, script: &str) -> Command {
        let mut command = Command::new(&self.python);
        command
            .args(["-c", &format!("{UPSTREAM_PRELUDE}{script}")])
            .arg(&self.checkout)
            .arg(&self.shims);
        command
    }
}

/// Runs `command` (a Python side of a parity test) with `input` on its standard input and reads
/// what it prints as JSON. A process that fails, or prints no JSON, fails the test, quoting its
/// standard error.
pub fn run_json(command: &mut Command, input: &str) -> serde_json::Value {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .unwrap_or_else(|e| panic!("cannot write to {command:?}: {e}"));
    }
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{command:?} did not finish: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{command:?} failed: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{command:?} printed no JSON ({e}): {stderr}"))
}

/// `target/skipped-tests.log`, found from the test executable (`target/<profile>/deps/…`).
fn skip_log() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?.parent()?;
    Some(target.join("skipped-tests.log"))
}

/// The running test's name (the test harness names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string()
}
