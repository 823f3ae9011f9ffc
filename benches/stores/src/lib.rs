//! Shared pieces of the stores benchmark's Rust programs: the prepared data set, latency
//! summaries and process measurements (the `mb-stores-data` crate, shared with memvid-core's
//! driver too), and what only the engine's drivers use (`engine_driver`).

mod engine_driver;

pub use engine_driver::{engine_record, reopen_round};
pub use mb_stores_data::*;
