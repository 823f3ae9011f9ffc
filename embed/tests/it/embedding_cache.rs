//! `CachedEmbedder`: hits, misses, persistence across reopen, and model separation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mb_embed::{CacheStats, CachedEmbedder, EmbedError, Embedder, CACHE_NAMESPACE};
use mb_engine::{Engine, EngineOptions};

/// A deterministic embedder that counts the texts it is asked to embed.
struct Counting {
    id: &'static str,
    dim: usize,
    embedded: Arc<AtomicUsize>,
}

impl Counting {
    fn new(id: &'static str, dim: usize) -> (Counting, Arc<AtomicUsize>) {
        let embedded = Arc::new(AtomicUsize::new(0));
        let embedder = Counting {
            id,
            dim,
            embedded: embedded.clone(),
        };
        (embedder, embedded)
    }
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> mb_embed::Result<Vec<Vec<f32>>> {
        self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| (0..self.dim).map(|i| (t.len() + i) as f32).collect())
            .collect())
    }
}

#[test]
fn repeated_texts_are_embedded_once_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    let texts = ["alpha", "beta", "alpha", "gamma"];
    let first = {
        let engine = Arc::new(Engine::open(&path, EngineOptions::default()).unwrap());
        let (inner, embedded) = Counting::new("counting", 4);
        let cached = CachedEmbedder::new(inner, engine.clone()).unwrap();
        let first = cached.embed(&texts).unwrap();
        assert_eq!(
            embedded.load(Ordering::SeqCst),
            3,
            "alpha twice in one call: once"
        );
        assert_eq!(cached.stats(), CacheStats { hits: 0, misses: 4 });
        let again = cached.embed(&["gamma", "alpha", "delta"]).unwrap();
        assert_eq!(embedded.load(Ordering::SeqCst), 4);
        assert_eq!(cached.stats(), CacheStats { hits: 2, misses: 5 });
        assert_eq!(again[0], first[3]);
        assert_eq!(again[1], first[0]);
        drop(cached);
        Arc::try_unwrap(engine).ok().unwrap().close().unwrap();
        first
    };

    let engine = Arc::new(Engine::open(&path, EngineOptions::default()).unwrap());
    let (inner, embedded) = Counting::new("counting", 4);
    let cached = CachedEmbedder::new(inner, engine.clone()).unwrap();
    assert_eq!(cached.embed(&texts).unwrap(), first);
    assert_eq!(
        embedded.load(Ordering::SeqCst),
        0,
        "everything came from disk"
    );
    assert_eq!(cached.stats(), CacheStats { hits: 4, misses: 0 });
    assert_eq!(
        engine
            .state_keys(CACHE_NAMESPACE, "counting/")
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn models_do_not_share_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let (a, a_count) = Counting::new("model-a", 4);
    let (b, b_count) = Counting::new("model-b", 4);
    let a = CachedEmbedder::new(a, engine.clone()).unwrap();
    let b = CachedEmbedder::new(b, engine.clone()).unwrap();
    a.embed(&["same text"]).unwrap();
    b.embed(&["same text"]).unwrap();
    assert_eq!(a_count.load(Ordering::SeqCst), 1);
    assert_eq!(b_count.load(Ordering::SeqCst), 1);

    // A model id reused with another dimension recomputes instead of returning stale vectors.
    let (wider, wider_count) = Counting::new("model-a", 6);
    let wider = CachedEmbedder::new(wider, engine.clone()).unwrap();
    assert_eq!(wider.embed(&["same text"]).unwrap()[0].len(), 6);
    assert_eq!(wider_count.load(Ordering::SeqCst), 1);
}

#[test]
fn an_inner_embedder_that_miscounts_is_an_error() {
    struct Short;
    impl Embedder for Short {
        fn model_id(&self) -> &str {
            "short"
        }
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, _: &[&str]) -> mb_embed::Result<Vec<Vec<f32>>> {
            Ok(vec![vec![1.0, 0.0]])
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let cached = CachedEmbedder::new(Short, engine.clone()).unwrap();
    match cached.embed(&["one", "two"]) {
        Err(EmbedError::Inference(message)) => assert!(message.contains("1 vectors for 2")),
        other => panic!("{other:?}"),
    }
    assert!(engine.state_keys(CACHE_NAMESPACE, "").unwrap().is_empty());
}
