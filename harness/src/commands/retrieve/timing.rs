//! An embedder wrapper that adds up the time spent embedding, so ingestion time splits into
//! embedding and engine time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mb_embed::Embedder;

/// An embedder that adds up the time spent in its inner embedder.
pub(crate) struct TimedEmbedder {
    inner: Arc<dyn Embedder>,
    spent: parking_lot::Mutex<Duration>,
}

impl TimedEmbedder {
    pub(crate) fn new(inner: Arc<dyn Embedder>) -> TimedEmbedder {
        TimedEmbedder {
            inner,
            spent: parking_lot::Mutex::new(Duration::ZERO),
        }
    }

    /// The time spent since the last call.
    pub(crate) fn take(&self) -> Duration {
        std::mem::take(&mut *self.spent.lock())
    }
}

impl Embedder for TimedEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> mb_embed::Result<Vec<Vec<f32>>> {
        let started = Instant::now();
        let vectors = self.inner.embed(texts);
        *self.spent.lock() += started.elapsed();
        vectors
    }
}
