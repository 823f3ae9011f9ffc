//! What the tests that run upstream's own Python need: the checkout beside the project and the
//! differential venv (`scripts/setup.sh` builds it) with the import shims of
//! `scripts/upstream/shims`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mb_upstream::Upstream;
use serde::de::DeserializeOwned;

/// Upstream's checkout, opened, and the Python that runs its code.
pub struct UpstreamPython {
    /// The checkout's wording.
    pub upstream: Upstream,
    checkout: PathBuf,
    python: PathBuf,
    shims: PathBuf,
}

impl UpstreamPython {
    /// The checkout and the venv, or `None` after a `skipped:` line (a failure under CI).
    pub fn find() -> Option<UpstreamPython> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let checkout = root.join("../shared/upstream/MemoryBench");
        let python = root.join(".cache/upstream-venv/bin/python");
        if !checkout.join("memorybench.py").is_file() || !python.is_file() {
            mb_core::test_data::skip(&format!(
                "{} or {} is absent (bash scripts/setup.sh builds the venv)",
                checkout.display(),
                python.display()
            ));
            return None;
        }
        Some(UpstreamPython {
            upstream: Upstream::open(&checkout).unwrap(),
            checkout,
            python,
            shims: root.join("scripts/upstream/shims"),
        })
    }

    /// Runs `script` (its arguments: the checkout, then the shims' folder) with `input` on its
    /// standard input, and reads what it prints as JSON.
    pub fn run<T: DeserializeOwned>(&self, script: &str, input: &str) -> T {
        let mut child = Command::new(&self.python)
            .args(["-c", script])
            .arg(&self.checkout)
            .arg(&self.shims)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}
