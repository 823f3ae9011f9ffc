//! Vector search: cosine similarity over unit vectors, exact or HNSW per collection.

mod codes;
pub(crate) mod collection;
pub mod distance;
mod graph;

pub use graph::HnswParams;
