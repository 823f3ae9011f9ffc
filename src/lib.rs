//! memorybench-rs: a native rebuild of the MemoryBench memory baselines and harness.
//!
//! This umbrella crate re-exports the workspace crates so that cross-crate integration tests
//! (`tests/`) and benchmarks (`benches/`) have a package to live in.

pub use mb_baselines as baselines;
pub use mb_core as core;
pub use mb_datasets as datasets;
pub use mb_embed as embed;
pub use mb_engine as engine;
pub use mb_eval as eval;
pub use mb_llm as llm;
pub use mb_text as text;
pub use mb_whoosh_query as whoosh_query;
