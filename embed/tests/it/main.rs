//! Integration tests of `mb-embed`, one binary (runtime location tests run alone in theirs).

mod embedding_cache;
mod http_embedder;
mod onnx_bad_input;
mod onnx_embedder;
mod optional_models;
