//! Latency profile of the retrieval baselines' memory operations (criterion).
//!
//! `cargo bench --bench memory_ops` — for every memory system: memorizing one LoCoMo
//! conversation (the first of `../shared/data/locomo/locomo10-dev.json`, 419 turns, or the
//! built-in sample's 70 turns when that file is absent) into a fresh engine, and retrieving
//! the top 5 for every one of its questions from an engine holding that memory alone (the
//! lexical index is shared by an engine's namespaces, so earlier samples must not grow it). Engine-side cost: the LLM roles are offline and
//! embeddings come from the model-free hashing embedder, so model time (see
//! `benches/embed_throughput.py`, and `mb-harness retrieve`, which reports embedding and engine
//! time apart) is left out. `MB_BENCH_SYSTEMS=bm25_message,a_mem` limits the systems.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use memorybench::baselines::{registry, MemoryContext, SystemSettings};
use memorybench::core::Lang;
use memorybench::datasets::corpus::{locomo_conversation, Conversation};
use memorybench::datasets::dataset::CorpusFormat;
use memorybench::datasets::sample::SAMPLE_LOCOMO_JSON;
use memorybench::embed::{Embedder, HashingEmbedder};
use memorybench::engine::{Engine, EngineOptions};

use memorybench::llm::{CacheMode, LlmSettings, LlmStack};
use serde_json::Value;

fn conversation() -> (Conversation, Vec<String>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/locomo/locomo10-dev.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|_| SAMPLE_LOCOMO_JSON.to_string());
    let samples: Vec<Value> = serde_json::from_str(&text).expect("LoCoMo JSON");
    let conversation = locomo_conversation(&samples[0]["conversation"]).expect("conversation");
    let questions = samples[0]["qa"]
        .as_array()
        .expect("qa")
        .iter()
        .filter_map(|q| q["question"].as_str().map(str::to_string))
        .collect();
    (conversation, questions)
}

fn bench(c: &mut Criterion) {
    let (conversation, questions) = conversation();
    let llm = Arc::new(
        LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).expect("offline roles"),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    // A fresh engine in its own directory, removed when the guard drops.
    let fresh_engine = || {
        let dir = tempfile::tempdir().expect("temporary directory");
        let engine = Engine::open(dir.path().join("engine"), EngineOptions::default());
        (dir, Arc::new(engine.expect("engine")))
    };
    let context = |engine: &Arc<Engine>, name: &str| MemoryContext {
        engine: engine.clone(),
        namespace: name.to_string(),
        llm: llm.clone(),
        embedder: Some(Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>),
        lang: Lang::En,
        settings: SystemSettings::default(),
        date: "2023-05-08".to_string(),
    };
    let mut group = c.benchmark_group(format!(
        "conversation of {} turns",
        conversation.turn_count()
    ));
    group.sample_size(20);
    let wanted = std::env::var("MB_BENCH_SYSTEMS").ok();
    for spec in registry::REGISTRY {
        let name = spec.name;
        if spec.memoryless
            || wanted
                .as_ref()
                .is_some_and(|w| !w.split(',').any(|s| s == name))
        {
            continue;
        }
        group.bench_function(format!("{name}/memorize corpus"), |b| {
            b.iter_batched(
                || {
                    let (dir, engine) = fresh_engine();
                    (dir, spec.build(context(&engine, name)).expect("memory"))
                },
                |(dir, memory)| {
                    runtime
                        .block_on(memory.memorize_corpus(&conversation, CorpusFormat::Locomo))
                        .expect("memorized");
                    (dir, memory)
                },
                BatchSize::PerIteration,
            )
        });
        let (_dir, engine) = fresh_engine();
        let memory = spec.build(context(&engine, name)).expect("memory");
        runtime
            .block_on(memory.memorize_corpus(&conversation, CorpusFormat::Locomo))
            .expect("memorized");
        group.bench_function(
            format!("{name}/retrieve top 5 for {} questions", questions.len()),
            |b| {
                b.iter(|| {
                    for question in &questions {
                        runtime
                            .block_on(memory.retrieve(question, Lang::En, 5))
                            .expect("retrieved");
                    }
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
