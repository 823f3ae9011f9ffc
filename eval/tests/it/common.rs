//! Running Python snippets in the setup venv, for parity tests against upstream's packages.

use std::path::PathBuf;
use std::process::Command;

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
    let mut command = Command::new(python);
    command.args(["-c", code]);
    let input = serde_json::to_string(input).unwrap();
    serde_json::from_value(mb_core::test_data::run_json(&mut command, &input)).unwrap()
}
