//! The embedding error type.
//!
//! Each variant names the file, endpoint or text involved and, where a command fixes the problem,
//! says which one, so that a binary can print it as one readable line.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = EmbedError> = std::result::Result<T, E>;

/// Everything that can go wrong while producing embeddings.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// A runtime library or model file the embedder needs is not where it was looked for.
    #[error("{what} not found (looked in {looked_in}); {fix}")]
    AssetMissing {
        /// What is missing, e.g. "ONNX Runtime library".
        what: &'static str,
        /// The places searched, comma-separated.
        looked_in: String,
        /// The command or setting that fixes it.
        fix: String,
    },
    /// The ONNX Runtime library could not be loaded or initialized.
    #[error("{}: cannot load ONNX Runtime: {detail}", path.display())]
    Runtime {
        /// The library that was loaded.
        path: PathBuf,
        /// What ONNX Runtime or the loader said.
        detail: String,
    },
    /// The model file is not a usable ONNX model, or does not have the expected inputs/outputs.
    #[error("{}: unusable embedding model: {detail}", path.display())]
    Model {
        /// The model file.
        path: PathBuf,
        /// Why it cannot be used.
        detail: String,
    },
    /// The tokenizer file cannot be read, or does not fit the model.
    #[error("{}: unusable tokenizer: {detail}", path.display())]
    Tokenizer {
        /// The tokenizer file.
        path: PathBuf,
        /// Why it cannot be used.
        detail: String,
    },
    /// A configuration value that cannot work.
    #[error("invalid embedder setting {field}: {reason}")]
    Config {
        /// The setting.
        field: &'static str,
        /// Why it was rejected.
        reason: String,
    },
    /// Inference failed on an input.
    #[error("embedding inference failed: {0}")]
    Inference(String),
    /// An embedding endpoint could not be reached or kept failing.
    #[error("{url}: {detail}")]
    Http {
        /// The endpoint.
        url: String,
        /// What happened on the last attempt.
        detail: String,
    },
    /// An embedding endpoint answered with something that is not a valid embeddings response.
    #[error("{url}: invalid embeddings response: {detail}")]
    BadResponse {
        /// The endpoint.
        url: String,
        /// What was wrong with it.
        detail: String,
    },
    /// A vector of another dimension than the embedder declares.
    #[error("embedder {model:?} returned a {got}-dimensional vector, expected {expected}")]
    Dimension {
        /// The embedder's model id.
        model: String,
        /// Declared dimension.
        expected: usize,
        /// Returned dimension.
        got: usize,
    },
    /// The engine behind the embedding cache failed.
    #[cfg(feature = "engine")]
    #[error("embedding cache: {0}")]
    Cache(#[from] mb_engine::Error),
}
