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
