//! Vector search: cosine similarity over unit vectors, exact or HNSW per collection.

mod arena;
mod codes;
pub(crate) mod codes_check;
pub(crate) mod collection;
pub mod distance;
pub(crate) mod file;
mod graph;
mod graph_file;
mod growth;
mod insert;
mod io;
mod kernel;
mod kernel_split;
mod layout;
mod mapped;
mod params;
mod pending;
mod points;
mod scan;
mod slots;
pub(crate) mod source;
mod topk;
mod upper;

pub use params::HnswParams;

/// A unit vector of `dim` pseudo-random components determined by `seed`, for tests that need
/// many distinct, reproducible vectors without a random-number generator.
#[cfg(test)]
pub(crate) fn seeded_unit(seed: u64, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim)
        .map(|i| ((seed as f32 * 12.9898 + i as f32 * 78.233).sin() * 43_758.547).fract())
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}
