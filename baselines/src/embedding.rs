//! Embedding from the async memory code without stalling the runtime. An in-process model (or a
//! blocking HTTP client) computes for milliseconds to seconds; run on a runtime worker thread it
//! would keep that worker from everything else, so with `--threads 1` no model wait could
//! overlap an embedding. These run the embedder on tokio's blocking pool instead.

use std::sync::Arc;

use mb_embed::{Embedder, OnnxReranker};

use crate::error::MemoryError;

/// One vector per text, computed off the runtime's worker threads (on the calling thread when
/// no runtime runs).
pub(crate) async fn embed_texts(
    embedder: &Arc<dyn Embedder>,
    texts: Vec<String>,
) -> Result<Vec<Vec<f32>>, MemoryError> {
    let embedder = Arc::clone(embedder);
    off_runtime(move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        embedder.embed(&refs)
    })
    .await
}

/// The vector of one text, computed off the runtime's worker threads.
pub(crate) async fn embed_text(
    embedder: &Arc<dyn Embedder>,
    text: String,
) -> Result<Vec<f32>, MemoryError> {
    let embedder = Arc::clone(embedder);
    off_runtime(move || embedder.embed_one(&text)).await
}

/// The cross-encoder's score of each passage for `query`, computed off the runtime's workers.
pub(crate) async fn rerank_scores(
    reranker: &Arc<OnnxReranker>,
    query: String,
    passages: Vec<String>,
) -> Result<Vec<f32>, MemoryError> {
    let reranker = Arc::clone(reranker);
    off_runtime(move || {
        let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
        reranker.score(&query, &refs)
    })
    .await
}

async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> mb_embed::Result<T> + Send + 'static,
) -> Result<T, MemoryError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(work()?);
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => Ok(result?),
        // The embedder's own panic, as if it had run here.
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(error) => Err(MemoryError::Config(format!(
            "embedding stopped with the runtime: {error}"
        ))),
    }
}
