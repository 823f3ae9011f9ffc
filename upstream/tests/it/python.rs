//! What the tests that run upstream's own Python need: the checkout beside the project and the
//! differential venv (`scripts/setup.sh` builds it) with the import shims of
//! `scripts/upstream/shims`.

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// What every script starts with: `root` is the checkout (the first argument), and upstream's
/// heavy imports it never calls are shimmed (`scripts/upstream/shims`, the second).
const PRELUDE: &str = "import sys
root, shims = sys.argv[1], sys.argv[2]
sys.path.insert(0, shims)
import heavy_import_shims
heavy_import_shims.install()
";

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

    /// Runs `script` after [`PRELUDE`] (so `root` names the checkout and every heavy import is
    /// shimmed) with `input` on its standard input, and reads what it prints as JSON.
    pub fn run<T: DeserializeOwned>(&self, script: &str, input: &str) -> T {
        let mut command = Command::new(&self.python);
        command
            .args(["-c", &format!("{PRELUDE}{script}")])
            .arg(&self.checkout)
            .arg(&self.shims);
        serde_json::from_value(mb_core::test_data::run_json(&mut command, input)).unwrap()
    }
}
