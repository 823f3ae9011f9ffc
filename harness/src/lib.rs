//! `mb-harness`: the MemoryBench benchmark on memorybench-rs, as a library the `mb-harness`
//! binary is a thin command line over.
//!
//! The layout follows the architecture:
//!
//! - [`commands`]: one module per subcommand, each with its arguments and a
//!   `run(&Args) -> Result<(), HarnessError>` entry point: the four regimes (`off_policy`,
//!   `train_performance`, `stepwise`, `on_policy`; `longmemeval` is `off-policy --longmemeval`),
//!   `evaluate` and `summarize`, `import`, `generate_dialogs`, `report`, `retrieve`, `plan` and
//!   `sweep`, and `list`.
//! - `run`: the plumbing the regimes share: their flags and set up, the regime driver, the run
//!   directory and its resume log, training dialogs and their memorization, the memory cache,
//!   memory copies and the memory grown in batches, answering cases (with fewer memories when
//!   the context overflows), conversations with the simulated user, costs and progress bars.
//! - What any command may open: the engine `store`, the `embedders` (`--embedder`), the data
//!   source (`data`, `--data`) and the model roles (`llm_args`, `--llm`), the crate's
//!   [`error`] type, and `stdout`, through which commands print without panicking on a closed
//!   pipe.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// Commands print through `stdout::line`, which returns a closed pipe as an error.
#![cfg_attr(not(test), deny(clippy::print_stdout))]

pub mod commands;
mod data;
mod embedders;
pub mod error;
mod llm_args;
mod run;
mod stdout;
mod store;

pub use error::HarnessError;
/// For the binary: `--progress-file` and `--resume` without the run's flags.
pub use run::{
    progress_file::record_to as record_progress_to, resume_command::with_recorded_flags,
};
