//! `mb-datasets`: MemoryBench's datasets as upstream reads and splits them.
//!
//! [`catalog`] reads the dataset configurations (`configs/datasets/`) and [`corpus`] the
//! conversation corpora (LoCoMo, DialSim) with upstream's memory documents; [`pyliteral`]
//! reads string columns written as JSON or as Python literals. Upstream regenerates train/test splits from raw data with Python's `random` module, so a
//! faithful split needs Python's generator bit for bit: [`PyRandom`] reproduces
//! `random.Random(seed)` (MT19937 seeded by `init_by_array`, `_randbelow`, `sample`, `shuffle`),
//! and [`split::test_ids`] applies upstream's `get_test_ids`. [`metrics`] scores predictions
//! with upstream's per-dataset metrics, and [`summary`] computes upstream's normalised
//! summaries.

pub mod catalog;
pub mod corpus;
pub mod metrics;
pub mod pyliteral;
mod pyrandom;
pub mod split;
pub mod summary;

pub use pyrandom::PyRandom;
