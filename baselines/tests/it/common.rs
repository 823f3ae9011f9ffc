//! Fixtures: an engine in a temporary directory, offline LLM roles, a small deterministic
//! embedder, and the built-in sample conversation.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use mb_baselines::{registry, MemoryContext, MemorySystem, SystemSettings};
use mb_datasets::corpus::Conversation;
use mb_datasets::sample::sample_source;
use mb_datasets::DataSource;
use mb_embed::Embedder;
use mb_engine::{Engine, EngineOptions};
use mb_llm::ops::Lang;
use mb_llm::{CacheMode, LlmSettings, LlmStack};

/// Bag of hashed lower-case words in 4096 dimensions, L2-normalised: texts sharing words are
/// close. Deterministic, so tests need no model.
pub struct HashedWords;

impl Embedder for HashedWords {
    fn model_id(&self) -> &str {
        "hashed-words-4096"
    }

    fn dim(&self) -> usize {
        4096
    }

    fn embed(&self, texts: &[&str]) -> mb_embed::Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut v = vec![0f32; 4096];
                for word in text
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| w.len() > 2)
                {
                    let mut h = DefaultHasher::new();
                    word.to_lowercase().hash(&mut h);
                    v[(h.finish() % 4096) as usize] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

pub fn engine(dir: &std::path::Path) -> Arc<Engine> {
    Arc::new(Engine::open(dir.join("engine"), EngineOptions::default()).unwrap())
}

pub fn offline() -> Arc<LlmStack> {
    Arc::new(LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).unwrap())
}

pub fn context(engine: Arc<Engine>, namespace: &str, llm: Arc<LlmStack>) -> MemoryContext {
    MemoryContext {
        engine,
        namespace: namespace.to_string(),
        llm,
        embedder: Some(Arc::new(HashedWords)),
        lang: Lang::En,
        settings: SystemSettings::default(),
    }
}

pub fn system(name: &str, context: MemoryContext) -> Box<dyn MemorySystem> {
    registry::get(name).unwrap().build(context).unwrap()
}

/// The built-in sample conversation and its QA items (question, evidence, category).
pub fn sample() -> (Conversation, Vec<(String, Vec<String>, u64)>) {
    let source = sample_source().unwrap();
    let text = source.corpus_text("Sample-Locomo").unwrap().unwrap();
    let sample: serde_json::Value = serde_json::from_str(&text).unwrap();
    let conversation = mb_datasets::corpus::locomo_conversation(&sample["conversation"]).unwrap();
    let qa = sample["qa"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let evidence = q["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_string())
                .collect();
            (
                q["question"].as_str().unwrap().to_string(),
                evidence,
                q["category"].as_u64().unwrap(),
            )
        })
        .collect();
    (conversation, qa)
}
