//! `mb-harness`: the MemoryBench benchmark on memorybench-rs, as a library the `mb-harness`
//! binary is a thin command line over.
//!
//! Each command is a module with its arguments and a `run` function, usable from code and
//! tests: the four regimes ([`offpolicy`] for off-policy and train-performance, [`stepwise`],
//! [`onpolicy`], all driven by [`regime::run_regime`]), [`evaluation`] (`evaluate`,
//! `summarize`), [`import`], [`dialogs`] (`generate-dialogs`), [`report`], [`retrieve`] and
//! [`runtime::list`]. The rest is what they share: run setup and resume ([`run`],
//! [`stepped`]), answering and timing cases ([`cases`], [`cost`]), feedback and conversation
//! ([`feedback`], [`converse`]), the memory cache and progress bars.

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod backoff;
pub mod cases;
pub mod converse;
pub mod cost;
pub mod data;
pub mod dialogs;
pub mod evaluation;
pub mod feedback;
pub mod import;
pub mod llm_args;
pub mod longmemeval;
pub mod memory_cache;
pub mod memory_copy;
pub mod offpolicy;
pub mod onpolicy;
pub mod partial_log;
pub mod progress;
pub mod regime;
pub mod report;
pub mod retrieve;
pub mod run;
pub mod run_dir;
pub mod runtime;
pub mod stepped;
pub mod stepwise;
pub mod sweep;
pub mod training;
