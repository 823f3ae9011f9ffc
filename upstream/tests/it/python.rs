//! What the tests that run upstream's own Python need: the checkout and the differential venv
//! ([`mb_core::test_data::UpstreamPython`]), with the checkout's wording opened.

use mb_upstream::Upstream;
use serde::de::DeserializeOwned;

/// Upstream's checkout, opened, and the Python that runs its code.
pub struct UpstreamPython {
    /// The checkout's wording.
    pub upstream: Upstream,
    side: mb_core::test_data::UpstreamPython,
}

impl UpstreamPython {
    /// The checkout and the venv, or `None` after a `skipped:` line (a failure under CI).
    pub fn find() -> Option<UpstreamPython> {
        let side = mb_core::test_data::UpstreamPython::find()?;
        Some(UpstreamPython {
            upstream: Upstream::open(&side.checkout).unwrap(),
            side,
        })
    }

    /// Runs `script` (with `root` naming the checkout and every heavy import shimmed) with
    /// `input` on its standard input, and reads what it prints as JSON.
    pub fn run<T: DeserializeOwned>(&self, script: &str, input: &str) -> T {
        let mut command = self.side.script(script);
        serde_json::from_value(mb_core::test_data::run_json(&mut command, input)).unwrap()
    }
}
