//! Integration tests of the rig vector store over mb-engine: one binary, one link of the engine.

mod agent;
mod common;
mod embedding;
mod errors;
mod filters;
mod onnx;
mod persistence;
mod search;
