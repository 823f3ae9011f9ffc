//! How an agent project embeds `mb-engine` as its memory store, with `mb-embed` embeddings.
//!
//! The agent keeps one namespace per user. Every chat turn becomes a record (with the speaker
//! and session as attributes and an all-MiniLM-L6-v2 embedding computed in-process); before
//! answering, the agent retrieves the most relevant memories by BM25, by vector similarity, or
//! both fused. Small per-user structures (here a profile) live in the namespace's state, written
//! atomically with the turn that changed them. Embeddings go through the engine-backed cache, so
//! the second run of the agent computes none.
//!
//! Last, the memory this project recommends to an agent: the hybrid memory of `mb-baselines`
//! (dated overlapping rounds, keys expanded with facts, stemmed BM25 fused with embeddings,
//! time-aware queries; docs/memory-systems.md measures it against every baseline), on the same
//! engine, answering the same questions.
//!
//! Run (after `bash scripts/setup.sh`): `cargo run --release --example agent_memory [ENGINE_DIR]`

use std::sync::Arc;

use mb_baselines::hybrid::HybridMemory;
use mb_baselines::{MemoryContext, MemorySystem};
use mb_core::Lang;
use mb_datasets::corpus::{Conversation, Session, Turn};
use mb_datasets::dataset::CorpusFormat;
use mb_embed::{CachedEmbedder, Embedder, OnnxEmbedder};
use mb_engine::{Batch, Engine, EngineOptions, HybridQuery, NamespaceOptions, NewRecord};
use mb_llm::{CacheMode, LlmSettings, LlmStack};

/// A built-in sample conversation: (session, speaker, text).
const CONVERSATION: &[(u32, &str, &str)] = &[
    (
        1,
        "Maya",
        "I finally adopted a dog last weekend, a border collie named Pixel.",
    ),
    (1, "Jon", "That's wonderful! How is Pixel settling in?"),
    (
        1,
        "Maya",
        "Great, though she chews every shoe in the apartment.",
    ),
    (1, "Jon", "I started pottery classes on Thursday evenings."),
    (
        1,
        "Maya",
        "Nice, are you making anything for your sister's wedding in June?",
    ),
    (1, "Jon", "Yes, a set of blue bowls as a wedding present."),
    (
        2,
        "Maya",
        "I signed up for the Lisbon half marathon in October.",
    ),
    (2, "Jon", "How is the training going with your knee?"),
    (
        2,
        "Maya",
        "The physiotherapist said I can run three times a week.",
    ),
    (
        2,
        "Jon",
        "My bowls cracked in the kiln, so I have to start over.",
    ),
    (
        2,
        "Maya",
        "Oh no! Pixel says sorry too, she just ate my running socks.",
    ),
    (
        2,
        "Jon",
        "I'm switching jobs, I'll be a data engineer at a bike-sharing company.",
    ),
];

const QUESTIONS: &[&str] = &[
    "What is the name of Maya's dog?",
    "What present is Jon making for the wedding?",
    "Which race is Maya training for?",
    "What will Jon's new job be?",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| ".cache/agent-memory-demo".to_string());
    let _ = std::fs::remove_dir_all(&dir);
    let engine = Arc::new(Engine::open(&dir, EngineOptions::default())?);
    let embedder = CachedEmbedder::new(OnnxEmbedder::open_default()?, engine.clone())?;
    let space = embedder.space();
    engine.create_space(space.clone())?;
    engine.create_namespace("maya", NamespaceOptions::default())?;

    let texts: Vec<&str> = CONVERSATION.iter().map(|(_, _, text)| *text).collect();
    let vectors = embedder.embed(&texts)?;
    for (turn, ((session, speaker, text), vector)) in CONVERSATION.iter().zip(vectors).enumerate() {
        let mut batch = Batch::new();
        batch.put(
            NewRecord::new(format!("{speaker} says: {text}"))
                .with_attribute("speaker", *speaker)
                .with_attribute("session", session.to_string())
                .with_attribute("turn", turn.to_string())
                .with_vector(&space.name, vector),
        );
        if text.contains("adopted") {
            batch.put_state("profile/pet", &"border collie named Pixel")?;
        }
        engine.write("maya", batch)?;
    }
    println!(
        "stored {} memories in {dir} ({:?})",
        engine.count("maya")?,
        embedder.stats()
    );
    drop(embedder);
    close(engine)?;

    // A later run of the agent: memories and embeddings are still there.
    let engine = Arc::new(Engine::open(&dir, EngineOptions::default())?);
    let embedder = CachedEmbedder::new(OnnxEmbedder::open_default()?, engine.clone())?;
    embedder.embed(&texts)?;
    println!("re-embedding the conversation: {:?}", embedder.stats());
    let pet: Option<String> = engine.get_state("maya", "profile/pet")?;
    println!("profile/pet = {pet:?}\n");
    for question in QUESTIONS {
        println!("Q: {question}");
        for hit in engine.search_text("maya", question, 2)? {
            println!("  bm25   {:6.3}  {}", hit.score, hit.record.text);
        }
        let query_vector = embedder.embed_one(question)?;
        for hit in engine.search_vector("maya", &space.name, &query_vector, 2)? {
            println!("  vector {:6.3}  {}", hit.score, hit.record.text);
        }
        let query = HybridQuery::new(*question, &space.name, query_vector, 2);
        for hit in engine.search_hybrid("maya", &query)? {
            println!("  hybrid {:6.3}  {}", hit.score, hit.record.text);
        }
    }
    recommended_memory(&engine, Arc::new(embedder))?;
    close(engine)
}

/// The recommended memory: `mb_baselines::hybrid` over the same conversation, in its own
/// namespace, with the memory role offline (a model configured in `LlmSettings` would extract
/// the key facts instead).
fn recommended_memory(
    engine: &Arc<Engine>,
    embedder: Arc<dyn Embedder>,
) -> Result<(), Box<dyn std::error::Error>> {
    let dates = ["10:00 am on 8 May, 2023", "7:30 pm on 22 May, 2023"];
    let sessions = [1, 2].map(|number| Session {
        date_time: dates[number as usize - 1].to_string(),
        turns: CONVERSATION
            .iter()
            .enumerate()
            .filter(|(_, (session, _, _))| *session == number)
            .map(|(i, (_, speaker, text))| Turn {
                speaker: speaker.to_string(),
                dia_id: format!("D{number}:{i}"),
                text: text.to_string(),
            })
            .collect(),
    });
    let conversation = Conversation {
        speaker_a: Some("Maya".into()),
        speaker_b: Some("Jon".into()),
        sessions: sessions.to_vec(),
    };
    let llm = Arc::new(LlmStack::build(
        &LlmSettings::default(),
        CacheMode::Off,
        None,
    )?);
    let context = MemoryContext {
        engine: engine.clone(),
        namespace: "maya-hybrid".into(),
        llm,
        embedder: Some(embedder),
        lang: Lang::En,
        settings: mb_baselines::registry::get("hybrid")?.settings(None)?,
        // The day questions are asked on: "last week" means the week before it.
        date: "2023-05-29".into(),
    };
    let memory = HybridMemory::new(context)?;
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    runtime.block_on(memory.memorize_corpus(&conversation, CorpusFormat::Locomo))?;
    println!(
        "\nthe recommended memory (hybrid), {} rounds:",
        memory.stats()?.items
    );
    for question in QUESTIONS
        .iter()
        .chain(&["What happened to Jon's bowls last week?"])
    {
        println!("Q: {question}");
        for found in runtime.block_on(memory.retrieve(question, Lang::En, 1))? {
            println!("  {:.3}  {}", found.score, found.text.replace('\n', " / "));
        }
    }
    Ok(())
}

/// Closes the engine once the last other handle (the cache's) is gone.
fn close(engine: Arc<Engine>) -> Result<(), Box<dyn std::error::Error>> {
    match Arc::try_unwrap(engine) {
        Ok(engine) => Ok(engine.close()?),
        Err(_) => Err("the engine is still shared".into()),
    }
}
