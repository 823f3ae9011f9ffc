//! The crate's error type, and how it crosses into rig's error types.
//!
//! rig's traits fix their error types ([`VectorStoreError`] for an index, [`ProviderError`] for a
//! model), so every failure here is first one typed [`Error`] that names its cause, then converted
//! at the trait boundary with the engine's or embedder's own message kept intact.

use rig_core::error::ProviderError;
use rig_core::vector_store::request::FilterError;
use rig_core::vector_store::VectorStoreError;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between rig and the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The storage engine refused or failed an operation (unknown namespace, a vector of the
    /// wrong dimension, an I/O error, ...). The engine's message is kept as it is.
    #[error("mb-engine: {0}")]
    Engine(#[from] mb_engine::Error),
    /// The embedder could not embed a text (missing model, inference failure, ...).
    #[error("mb-embed: {0}")]
    Embed(#[from] mb_embed::EmbedError),
    /// A document could not be serialized for storage, or a stored one could not be read back
    /// as the type the caller asked for.
    #[error("document JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// rig's `Embed` implementation of a document failed to produce its texts.
    #[error("document text extraction: {0}")]
    Extract(String),
    /// A document produced no text to embed, so it would have no vector to be found by.
    #[error("document {index} has no text to embed")]
    NothingToEmbed {
        /// Position of the document in the inserted list.
        index: usize,
    },
    /// A search filter the engine cannot evaluate. The engine filters on string equality of
    /// record attributes, all conditions ANDed; rig's `gt`, `lt` and `or` have no equivalent.
    #[error("unsupported filter: {0}")]
    UnsupportedFilter(String),
}

impl From<Error> for VectorStoreError {
    fn from(error: Error) -> Self {
        match error {
            Error::Json(error) => VectorStoreError::JsonError(error),
            Error::Embed(error) => VectorStoreError::EmbeddingError(embed_to_provider(error)),
            Error::UnsupportedFilter(reason) => {
                VectorStoreError::FilterError(FilterError::TypeError(reason))
            }
            other => VectorStoreError::datastore(other),
        }
    }
}

/// The embedder's failure as rig's model error, keeping its message.
pub(crate) fn embed_to_provider(error: mb_embed::EmbedError) -> ProviderError {
    ProviderError::Provider(format!("mb-embed: {error}"))
}
