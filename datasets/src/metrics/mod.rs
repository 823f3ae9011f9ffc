//! MemoryBench's per-dataset metrics, computed exactly as upstream computes them.

pub mod rouge;
