//! Running Python snippets in the setup venv, for parity tests against upstream's packages.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The checkout's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `code` with the venv's Python, `input` as JSON on stdin; returns its stdout as JSON.
pub fn venv_python<T: serde::de::DeserializeOwned>(code: &str, input: &impl serde::Serialize) -> T {
    let python = root().join(".cache/venv/bin/python");
    assert!(
        python.exists(),
        "{} missing: run `bash scripts/setup.sh`",
        python.display()
    );
    let mut child = Command::new(python)
        .args(["-c", code])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(input).unwrap().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the Python side failed");
    serde_json::from_slice(&output.stdout).unwrap()
}
