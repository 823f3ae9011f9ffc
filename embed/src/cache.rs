//! A persistent embedding cache in the engine.
//!
//! Benchmark runs embed the same dialogue turns and questions again and again. The cache keeps
//! every vector in the engine's state under (model id, sha-256 of the text), in a namespace of
//! its own, so a repeated run never recomputes one; only the missing texts of a call reach the
//! wrapped embedder, in one batch, and are stored in one atomic write.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mb_engine::{Batch, Engine, NamespaceOptions};
use sha2::{Digest, Sha256};

use crate::error::{EmbedError, Result};
use crate::Embedder;

/// The engine namespace that holds cached vectors.
pub const CACHE_NAMESPACE: &str = "mb-embed-cache";

/// An [`Embedder`] that looks vectors up in the engine before computing them.
pub struct CachedEmbedder<E> {
    inner: E,
    engine: Arc<Engine>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// How often the cache answered, since the wrapper was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Texts answered from the cache.
    pub hits: u64,
    /// Texts that had to be embedded.
    pub misses: u64,
}

impl<E: Embedder> CachedEmbedder<E> {
    /// Wraps `inner`, storing vectors in `engine` (creating the cache namespace if needed).
    pub fn new(inner: E, engine: Arc<Engine>) -> Result<CachedEmbedder<E>> {
        engine.ensure_namespace(CACHE_NAMESPACE, NamespaceOptions::default())?;
        Ok(CachedEmbedder {
            inner,
            engine,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    /// Hit and miss counts so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    /// The wrapped embedder.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    fn key(&self, text: &str) -> String {
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{}/{hex}", self.inner.model_id())
    }

    fn lookup(&self, key: &str) -> Result<Option<Vec<f32>>> {
        let cached: Option<Vec<f32>> = self.engine.get_state(CACHE_NAMESPACE, key)?;
        // A vector of another length was stored by an embedder that reused this model id with
        // a different model: recompute it rather than return it.
        Ok(cached.filter(|v| v.len() == self.inner.dim()))
    }
}

impl<E: Embedder> Embedder for CachedEmbedder<E> {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let keys: Vec<String> = texts.iter().map(|t| self.key(t)).collect();
        let mut vectors: Vec<Option<Vec<f32>>> = Vec::with_capacity(texts.len());
        // Distinct missing texts, each embedded once however often it repeats in the call.
        let mut missing: HashMap<&str, usize> = HashMap::new();
        let mut missing_texts: Vec<&str> = Vec::new();
        for (text, key) in texts.iter().zip(&keys) {
            let cached = self.lookup(key)?;
            if cached.is_none() && !missing.contains_key(key.as_str()) {
                missing.insert(key.as_str(), missing_texts.len());
                missing_texts.push(text);
            }
            vectors.push(cached);
        }
        let hits = vectors.iter().filter(|v| v.is_some()).count() as u64;
        self.hits.fetch_add(hits, Ordering::Relaxed);
        self.misses
            .fetch_add(texts.len() as u64 - hits, Ordering::Relaxed);
        if missing_texts.is_empty() {
            return Ok(vectors.into_iter().flatten().collect());
        }

        let computed = self.inner.embed(&missing_texts)?;
        if computed.len() != missing_texts.len() {
            return Err(EmbedError::Inference(format!(
                "{} returned {} vectors for {} texts",
                self.inner.model_id(),
                computed.len(),
                missing_texts.len()
            )));
        }
        let mut batch = Batch::new();
        for (key, &slot) in &missing {
            if let Some(vector) = computed.get(slot) {
                batch.put_state(*key, vector)?;
            }
        }
        self.engine.write(CACHE_NAMESPACE, batch)?;
        Ok(vectors
            .into_iter()
            .zip(&keys)
            .map(|(cached, key)| {
                cached.unwrap_or_else(|| {
                    missing
                        .get(key.as_str())
                        .and_then(|&slot| computed.get(slot))
                        .cloned()
                        .unwrap_or_default()
                })
            })
            .collect())
    }
}
