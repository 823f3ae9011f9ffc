//! How each memory system's costs grow with the length of the conversation it memorizes.
//!
//! `cargo bench --bench cost_growth` memorizes the first 1 000, 5 000 and all (≈19 000) turns
//! of DialSim's The Office transcripts (`../shared/data/dialsim/dialsim_corpus_theoffice.txt`;
//! skipped, saying so, without it) into a fresh engine per system and size, and reports the
//! memorization cost per 1 000 turns and the retrieval latency (p50 over 50 questions made of
//! turns of the conversation) at each size. Engine side only: the LLM roles are offline and the
//! embedder is the model-free hashing one, so what grows is the memory's own work.
//! `MB_BENCH_SYSTEMS=bm25_message,mem0` limits the systems; `MB_BENCH_TURNS=1000,5000` the sizes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use memorybench::baselines::{registry, MemoryContext, SystemSettings};
use memorybench::core::Lang;
use memorybench::datasets::corpus::{parse_dialsim, Conversation};
use memorybench::datasets::dataset::CorpusFormat;
use memorybench::embed::{Embedder, HashingEmbedder};
use memorybench::engine::{Engine, EngineOptions};
use memorybench::llm::{CacheMode, LlmSettings, LlmStack};

/// The first `turns` turns of `conversation`, sessions cut where the count ends.
fn first_turns(conversation: &Conversation, turns: usize) -> Conversation {
    let mut left = turns;
    let mut cut = conversation.clone();
    cut.sessions.retain_mut(|session| {
        if left == 0 {
            return false;
        }
        session.turns.truncate(left);
        left -= session.turns.len();
        true
    });
    cut
}

fn p50(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/dialsim/dialsim_corpus_theoffice.txt");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "skipped: {} not found (the shared test data)",
            path.display()
        );
        return;
    };
    let whole = parse_dialsim(&text);
    let sizes: Vec<usize> = std::env::var("MB_BENCH_TURNS")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 5_000, whole.turn_count()]);
    let wanted = std::env::var("MB_BENCH_SYSTEMS").ok();
    let llm = Arc::new(
        LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).expect("offline roles"),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let questions: Vec<String> = whole
        .sessions
        .iter()
        .flat_map(|s| &s.turns)
        .step_by(whole.turn_count().max(50) / 50)
        .take(50)
        .map(|t| t.text.clone())
        .collect();

    println!("| system | turns | memorize | per 1 000 turns | retrieval p50 |");
    println!("|---|---|---|---|---|");
    for spec in registry::REGISTRY {
        if spec.memoryless
            || wanted
                .as_ref()
                .is_some_and(|w| !w.split(',').any(|s| s == spec.name))
        {
            continue;
        }
        let mut per_thousand = Vec::new();
        for &turns in &sizes {
            let conversation = first_turns(&whole, turns);
            let dir = tempfile::tempdir().expect("temporary directory");
            let engine = Arc::new(
                Engine::open(dir.path().join("engine"), EngineOptions::default()).expect("engine"),
            );
            let context = MemoryContext {
                engine: engine.clone(),
                namespace: spec.name.to_string(),
                llm: llm.clone(),
                embedder: Some(Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>),
                lang: Lang::En,
                settings: SystemSettings::default(),
                date: "2023-05-08".to_string(),
            };
            let memory = spec.build(context).expect("memory");
            let started = Instant::now();
            runtime
                .block_on(memory.memorize_corpus(&conversation, CorpusFormat::DialSim))
                .expect("memorized");
            let memorized = started.elapsed();
            let latencies: Vec<Duration> = questions
                .iter()
                .map(|q| {
                    let started = Instant::now();
                    runtime
                        .block_on(memory.retrieve(q, Lang::En, 5))
                        .expect("retrieved");
                    started.elapsed()
                })
                .collect();
            let count = conversation.turn_count();
            let per = memorized.as_secs_f64() * 1000.0 / count as f64;
            per_thousand.push(per);
            println!(
                "| {} | {count} | {:.2} s | {:.3} s | {:.2} ms |",
                spec.name,
                memorized.as_secs_f64(),
                per,
                p50(latencies).as_secs_f64() * 1000.0
            );
        }
        if let (Some(first), Some(last)) = (per_thousand.first(), per_thousand.last()) {
            println!(
                "| {} | growth of the per-turn cost, largest / smallest | | {:.2}x | |",
                spec.name,
                last / first
            );
        }
    }
}
