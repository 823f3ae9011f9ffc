//! `mb-datasets`: MemoryBench's datasets as upstream reads and splits them.
//!
//! [`catalog`] reads the dataset configurations (`configs/datasets/`). A [`source::DataSource`]
//! hands out stored rows — a local copy of the Hugging Face repository
//! ([`source::HfDirectory`], Arrow, Parquet or JSON lines via [`table`]) or rows built in the
//! process ([`source::InMemorySource`]: the raw-data [`import`]ers and the built-in
//! [`sample`]) — and [`dataset::load`] types them into [`row::Row`]s, reading string columns
//! written as JSON or as Python literals ([`mb_core::pyliteral`]) and the conversation corpora
//! ([`corpus`]).
//!
//! [`longmemeval`] reads LongMemEval's files and scores retrieval as its official scripts do.
//!
//! Upstream regenerates train/test splits from raw data with Python's `random` module, so a
//! faithful split needs Python's generator bit for bit: [`PyRandom`] reproduces
//! `random.Random(seed)` (MT19937 seeded by `init_by_array`, `_randbelow`, `sample`, `shuffle`),
//! and [`split::test_ids`] applies upstream's `get_test_ids`.
//!
//! Scoring predictions (upstream's metrics, the judges, summaries and result files) is
//! `mb-eval`'s: its judges need the model client and its HTTP stack, which loading data does
//! not.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod catalog;
pub mod corpus;
pub mod dataset;
mod error;
pub mod import;
mod locate;
pub mod longmemeval;
mod pyrandom;
pub mod row;
pub mod sample;
pub mod source;
pub mod split;
pub mod table;

pub use catalog::{Catalog, DatasetConfig, DatasetType};
pub use dataset::{load, load_dataset, Dataset};
pub use error::DataError;
pub use locate::open_source;
pub use pyrandom::PyRandom;
pub use row::{Input, Row};
pub use source::{DataSource, HfDirectory, InMemorySource};
pub use split::SplitName;
