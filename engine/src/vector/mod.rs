//! Vector search: cosine similarity over unit vectors, exact or HNSW per collection.

pub(crate) mod collection;
pub mod distance;

pub use collection::HnswParams;
