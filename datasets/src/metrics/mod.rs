//! MemoryBench's per-dataset metrics, computed exactly as upstream computes them.

pub mod locomo;
pub mod porter;
pub mod rouge;
