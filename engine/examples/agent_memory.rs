//! How an agent project embeds `mb-engine` as its memory store.
//!
//! The agent keeps one namespace per user. Every chat turn becomes a record (with the speaker
//! and session as attributes and an embedding from the agent's own embedder); before answering,
//! the agent retrieves the most relevant memories by BM25, by vector similarity, or both fused.
//! Small per-user structures (here a profile) live in the namespace's state, written atomically
//! with the turn that changed them.
//!
//! Run: `cargo run --release -p mb-engine --example agent_memory [ENGINE_DIR]`

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use mb_engine::{Batch, Engine, EngineOptions, HybridQuery, NamespaceOptions, NewRecord, Space};

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

/// A stand-in for a real embedding model: hashed bag of words. An agent would call its
/// sentence-embedding model here; the engine only needs vectors of a fixed dimension.
fn embed(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 64];
    for term in mb_engine::Analyzer::Standard.analyze(text) {
        let mut h = DefaultHasher::new();
        term.text.hash(&mut h);
        v[(h.finish() % 64) as usize] += 1.0;
    }
    v
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| ".cache/agent-memory-demo".to_string());
    let _ = std::fs::remove_dir_all(&dir);
    let engine = Engine::open(&dir, EngineOptions::default())?;
    engine.create_space(Space::new("hash-bow-64", 64))?;
    engine.create_namespace("maya", NamespaceOptions::default())?;

    for (turn, (session, speaker, text)) in CONVERSATION.iter().enumerate() {
        let mut batch = Batch::new();
        batch.put(
            NewRecord::new(format!("{speaker} says: {text}"))
                .with_attribute("speaker", *speaker)
                .with_attribute("session", session.to_string())
                .with_attribute("turn", turn.to_string())
                .with_vector("hash-bow-64", embed(text)),
        );
        if text.contains("adopted") {
            batch.put_state("profile/pet", &"border collie named Pixel")?;
        }
        engine.write("maya", batch)?;
    }
    println!("stored {} memories in {dir}", engine.count("maya")?);
    engine.close()?;

    // A later run of the agent: everything is still there.
    let engine = Engine::open(&dir, EngineOptions::default())?;
    let pet: Option<String> = engine.get_state("maya", "profile/pet")?;
    println!("profile/pet = {pet:?}\n");
    for question in QUESTIONS {
        println!("Q: {question}");
        for hit in engine.search_text("maya", question, 2)? {
            println!("  bm25   {:6.3}  {}", hit.score, hit.record.text);
        }
        let query = HybridQuery::new(*question, "hash-bow-64", embed(question), 2);
        for hit in engine.search_hybrid("maya", &query)? {
            println!("  hybrid {:6.3}  {}", hit.score, hit.record.text);
        }
    }
    engine.close()?;
    Ok(())
}
