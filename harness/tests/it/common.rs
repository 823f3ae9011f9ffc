//! Running the binary as a user does, and reading what it wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// `mb-harness ARGS`.
pub fn harness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(args)
        .output()
        .unwrap()
}

/// `mb-harness ARGS` with its store and results under `dir` (`dir/store`, `dir/runs`).
pub fn harness_in(dir: &Path, args: &[&str]) -> Output {
    let store = dir.join("store").display().to_string();
    let runs = dir.join("runs").display().to_string();
    let mut all = args.to_vec();
    all.extend(["--store", store.as_str(), "--output-dir", runs.as_str()]);
    harness(&all)
}

/// The one run directory under `parent`.
pub fn only_run(parent: PathBuf) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1);
    dirs.pop().unwrap()
}

/// A JSON file's contents.
pub fn json(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}
