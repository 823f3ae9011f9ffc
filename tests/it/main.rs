//! Cross-crate integration tests, one binary: the engine, embedder and LLM layer together.

mod architecture;
mod common;
mod locomo_retrieval;
mod offline_operations;
mod outside_crates;
mod whoosh_locomo;
mod whoosh_ranking;
