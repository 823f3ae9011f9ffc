//! Memory tools over a memory system of the registry (`mb_baselines::registry`).

pub mod service;
pub mod tools;
