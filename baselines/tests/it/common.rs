//! Fixtures: an engine in a temporary directory, offline LLM roles, the model-free hashing
//! embedder, and the built-in sample conversation.

use std::sync::Arc;

use mb_baselines::lexical::LexicalSettings;
use mb_baselines::{registry, MemoryContext, MemorySystem, SystemSettings};
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::sample::sample_source;
use mb_datasets::DataSource;
use mb_embed::HashingEmbedder;
use mb_engine::{Engine, EngineOptions};

use mb_llm::{CacheMode, LlmSettings, LlmStack};

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
        embedder: Some(Arc::new(HashingEmbedder::new(4096))),
        lang: Lang::En,
        settings: SystemSettings::default(),
        date: "2023-05-08".to_string(),
    }
}

/// `context` with questions read as plain text instead of Whoosh query syntax.
pub fn plain(context: MemoryContext) -> MemoryContext {
    MemoryContext {
        settings: context
            .settings
            .with_own(&LexicalSettings::new(mb_engine::QuerySyntax::Plain))
            .unwrap(),
        ..context
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
