//! MemoryBench's per-dataset metrics, computed exactly as upstream computes them, and our
//! retrieval metrics for datasets with evidence labels.

pub mod judged;
pub mod legal;
pub mod locomo;
pub mod meteor;
pub mod punkt;
mod pychars;
pub mod readability;
pub mod retrieval;
pub mod rouge;
pub mod tokenize;
pub mod wordnet;
