//! Embedding runs off the async runtime's worker threads: on a single-threaded runtime two
//! questions embedding at once take about as long as one, so model waits and other questions
//! go on while a slow embedder computes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mb_baselines::{MemoryContext, TrainingDialog};
use mb_core::Lang;
use mb_embed::{Embedder, HashingEmbedder};

use mb_llm::{Message, Role};

use crate::common::{engine, offline, system};

/// How long each embedding call blocks its thread.
const EMBEDDING: Duration = Duration::from_millis(400);

/// A blocking embedder: the hashing embedder after a sleep, as a busy model would be.
struct SlowEmbedder(HashingEmbedder);

impl Embedder for SlowEmbedder {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }

    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn embed(&self, texts: &[&str]) -> mb_embed::Result<Vec<Vec<f32>>> {
        std::thread::sleep(EMBEDDING);
        self.0.embed(texts)
    }
}

#[tokio::test(flavor = "current_thread")]
async fn two_questions_embed_at_once_on_one_runtime_thread() {
    let dir = tempfile::tempdir().unwrap();
    let context = MemoryContext {
        embedder: Some(Arc::new(SlowEmbedder(HashingEmbedder::new(256)))),
        ..crate::common::context(engine(dir.path()), "slow", offline())
    };
    let memory = system("embedder_message", context);
    let messages = [Message {
        role: Role::User,
        content: "A heron waits by the river.".into(),
    }];
    memory
        .memorize_dialog(TrainingDialog {
            test_idx: 1,
            dataset: "Sample-Stories",
            lang: Lang::En,
            messages: &messages,
            metadata: None,
        })
        .await
        .unwrap();

    let started = Instant::now();
    let (first, second) = tokio::join!(
        memory.retrieve("heron", Lang::En, 1),
        memory.retrieve("river", Lang::En, 1)
    );
    let elapsed = started.elapsed();
    assert_eq!(first.unwrap().len(), 1);
    assert_eq!(second.unwrap().len(), 1);
    // Blocking the runtime's one thread would take two embeddings one after the other.
    assert!(
        elapsed < EMBEDDING * 2 - EMBEDDING / 4,
        "{elapsed:?}: the embeddings did not overlap"
    );
}
