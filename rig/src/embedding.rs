//! Any [`mb_embed::Embedder`] as a rig embedding model.
//!
//! rig embeds through a [`Model`]: a wire (what to send) bound to a transport (how it travels).
//! An in-process embedder is rig's pass-through [`Local`] wire over a transport that runs the
//! embedder, so rig's own [`EmbeddingsBuilder`](rig_core::embeddings::EmbeddingsBuilder), and
//! anything else that takes a `DynModel<Embedding>`, works offline with the same vectors the
//! engine index searches with.

use std::sync::Arc;

use mb_embed::Embedder;
use rig_core::driver::{Exchange, Local, Model, Opened, Opening, Step, Transport};
use rig_core::embeddings::{Embedding, EmbeddingResponse};
use rig_core::error::ProviderError;
use rig_core::operation::Embedding as EmbeddingOp;
use rig_core::wire::Capabilities;

use crate::error::embed_to_provider;

/// The most texts rig's batching builders send to the embedder in one call: the embedders batch
/// internally, so this only bounds the memory of one call.
pub const MAX_BATCH: usize = 64;

/// The rig model type [`embedding_model`] returns: rig's local embedding wire over an embedder.
pub type EmbedderModel<E> = Model<Local<EmbeddingOp>, EmbedderTransport<E>>;

/// The transport half of [`EmbedderModel`]: it answers each batch of texts by running the
/// embedder in-process, so no request leaves the process.
///
/// Embedding is CPU work done when rig first polls the reply, on the polling thread.
#[derive(Debug)]
pub struct EmbedderTransport<E> {
    embedder: Arc<E>,
}

impl<E> Clone for EmbedderTransport<E> {
    fn clone(&self) -> Self {
        EmbedderTransport {
            embedder: Arc::clone(&self.embedder),
        }
    }
}

/// A rig embedding model that embeds with `embedder`: named after its
/// [`model_id`](Embedder::model_id), reporting its dimension, batching [`MAX_BATCH`] texts.
///
/// Pass an `Arc<E>` (itself an embedder) to share one embedder with an
/// [`EngineIndex`](crate::EngineIndex). Erase the model with `.erase()`, or pass it where rig
/// takes `impl Into<DynModel<Embedding>>`.
pub fn embedding_model<E: Embedder + 'static>(embedder: E) -> EmbedderModel<E> {
    let embedder = Arc::new(embedder);
    let wire = Local::new("mb-embed")
        .with_id(embedder.model_id().to_owned())
        .with_capabilities(Capabilities::embedding(MAX_BATCH, embedder.dim()));
    Model::new(wire, EmbedderTransport { embedder })
}

impl<E: Embedder + 'static> Transport<Local<EmbeddingOp>> for EmbedderTransport<E> {
    fn send(&self, texts: Vec<String>, _exchange: Exchange) -> Opening<Step<EmbeddingOp>> {
        let embedder = Arc::clone(&self.embedder);
        Opening::new(async move {
            let response = embed(embedder.as_ref(), texts).map_err(|error| *error)?;
            Ok(Opened::new(futures::stream::iter([
                Ok::<_, ProviderError>(Step::End(response)),
            ])))
        })
    }
}

/// One rig embedding per text, in order, each carrying the text it embeds. (The error is boxed:
/// rig's error type is large, and this returns through the reply future.)
fn embed<E: Embedder>(
    embedder: &E,
    texts: Vec<String>,
) -> Result<EmbeddingResponse, Box<ProviderError>> {
    let borrowed: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder
        .embed(&borrowed)
        .map_err(|error| Box::new(embed_to_provider(error)))?;
    if vectors.len() != texts.len() {
        return Err(Box::new(ProviderError::Response(format!(
            "{} returned {} vectors for {} texts",
            embedder.model_id(),
            vectors.len(),
            texts.len()
        ))));
    }
    let embeddings = texts
        .into_iter()
        .zip(vectors)
        .map(|(document, vector)| Embedding {
            document,
            vec: vector.into_iter().map(f64::from).collect(),
        })
        .collect();
    let mut response = EmbeddingResponse::new(embeddings);
    response.model = Some(embedder.model_id().to_owned());
    Ok(response)
}
