//! `mb-harness`: runs MemoryBench regimes over the memory systems.
//!
//! The regimes are not implemented yet; the binary says so instead of pretending.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!(
        "mb-harness: the benchmark regimes are not built yet; run \
         `cargo run --release --example agent_memory` to try the memory engine"
    );
    ExitCode::from(2)
}
