//! A real MCP client drives the server: the official Python SDK (PyPI `mcp`, in the set-up
//! venv `.cache/venv`) over stdio and over Streamable HTTP (`mcp/tests/python_client.py`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache/venv/bin/python");
    let has_sdk = |python: &Path| {
        Command::new(python)
            .args(["-c", "import mcp.client.streamable_http"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    [venv, PathBuf::from("python3")]
        .into_iter()
        .find(|p| has_sdk(p))
}

fn drive(transport: &str) {
    let Some(python) = python() else {
        return mb_core::test_data::skip(
            "the Python MCP SDK is not installed (bash scripts/setup.sh installs mcp into .cache/venv)",
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python_client.py");
    let output = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_memorybench-mcp"))
        .arg(dir.path().join("store"))
        .arg(transport)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "python client over {transport} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_python_sdk_drives_stdio() {
    drive("stdio");
}

#[test]
fn the_python_sdk_drives_streamable_http() {
    drive("http");
}
