//! What the regimes (and `longmemeval`, `generate-dialogs`) share.
//!
//! - Setting up: [`args`] (the flags every regime takes), [`setup`] (the loaded set, the chosen
//!   systems and the services they share), [`regime`] (the driver: set up once, run every
//!   system, print one table).
//! - The run directory: [`dir`] (created or resumed), [`resume_command`] (the command it
//!   records, so that `--resume` needs no other flag) and [`partial_log`] (the resume log of
//!   answered cases).
//! - The memory: [`training`] (the training dialogs and their memorization),
//!   [`memory_cache`] (a memory reused across runs), [`memory_copy`] (a copy that meets one
//!   corpus), [`growing_memory`] (the memory of stepwise and on-policy runs, grown in batches).
//! - Answering: [`cases`] (answering, evaluating and timing test sets),
//!   [`fewer_memories`] (answering again with fewer memories when the context overflows),
//!   [`feedback`] and [`converse`] (the simulated user).
//! - Accounting: [`cost`], [`progress`] and [`progress_file`] (the same counts for a program
//!   following the run).

pub mod args;
pub mod cases;
pub mod converse;
pub mod cost;
pub mod dir;
pub mod evaluation;
pub mod feedback;
pub mod fewer_memories;
pub mod growing_memory;
pub mod memory_cache;
pub mod memory_copy;
pub mod partial_log;
pub mod progress;
pub mod progress_file;
pub mod regime;
pub mod resume_command;
pub mod setup;
pub mod table;
pub mod training;

pub use args::RunArgs;
pub use setup::{RunSetup, Services};
