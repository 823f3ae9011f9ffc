//! Shared pieces of the stores benchmark's Rust programs: the prepared data set, latency
//! summaries and process measurements (`data`, shared with memvid-core's driver too), and what
//! only the engine's drivers use (`engine_driver`).

mod data;
mod engine_driver;

pub use data::*;
pub use engine_driver::{engine_record, reopen_round};
