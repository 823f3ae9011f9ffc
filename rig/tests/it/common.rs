//! Shared fixtures: an engine in a temporary directory, and a small memory corpus.

use std::sync::Arc;

use mb_embed::{Embedder, HashingEmbedder};
use mb_engine::{Engine, EngineOptions};
use mb_rig::rig_core::embeddings::{EmbedError, TextEmbedder};
use mb_rig::rig_core::Embed;
use mb_rig::EngineIndex;
use serde::{Deserialize, Serialize};
use tempfile::TempDir;

/// Namespace the fixtures store memories in.
pub const NAMESPACE: &str = "maya";

/// A chat memory: what rig stores and gets back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub speaker: String,
    pub session: u32,
    pub text: String,
}

impl Embed for Memory {
    fn embed(&self, embedder: &mut TextEmbedder) -> Result<(), EmbedError> {
        embedder.embed(self.text.clone());
        Ok(())
    }
}

/// (speaker, session, text)
pub const CONVERSATION: &[(&str, u32, &str)] = &[
    (
        "Maya",
        1,
        "I finally adopted a dog last weekend, a border collie named Pixel.",
    ),
    ("Jon", 1, "I started pottery classes on Thursday evenings."),
    (
        "Maya",
        1,
        "Are you making anything for your sister's wedding in June?",
    ),
    ("Jon", 1, "Yes, a set of blue bowls as a wedding present."),
    (
        "Maya",
        2,
        "I signed up for the Lisbon half marathon in October.",
    ),
    (
        "Jon",
        2,
        "How is the marathon training going with your knee?",
    ),
    (
        "Maya",
        2,
        "The physiotherapist said I can run three times a week.",
    ),
    (
        "Jon",
        2,
        "My bowls cracked in the kiln, so I have to start over.",
    ),
    (
        "Jon",
        2,
        "I'm switching jobs, I'll be a data engineer at a bike-sharing company.",
    ),
];

pub fn memories() -> Vec<Memory> {
    CONVERSATION
        .iter()
        .map(|(speaker, session, text)| Memory {
            speaker: speaker.to_string(),
            session: *session,
            text: text.to_string(),
        })
        .collect()
}

/// A hashing embedder: no model, deterministic, words shared means close.
pub fn hashing() -> HashingEmbedder {
    HashingEmbedder::new(1024)
}

/// An engine in a fresh temporary directory (kept alive by the returned guard).
pub fn engine() -> (TempDir, Arc<Engine>) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let engine =
        Engine::open(dir.path().join("engine"), EngineOptions::default()).expect("open engine");
    (dir, Arc::new(engine))
}

/// An index over [`NAMESPACE`] holding [`memories`], and their document ids in insertion order.
pub fn filled_index<E: Embedder>(
    engine: &Arc<Engine>,
    embedder: E,
) -> (EngineIndex<E>, Vec<String>) {
    let index = EngineIndex::create(engine.clone(), NAMESPACE, embedder).expect("index");
    let ids = index.insert(memories()).expect("insert memories");
    (index, ids)
}

/// The engine's own ranking for `query`: (document id, cosine, text) of its `k` best records.
pub fn engine_ranking<E: Embedder>(
    index: &EngineIndex<E>,
    query: &str,
    k: usize,
) -> Vec<(String, f64, String)> {
    let vector = index.embedder().embed_one(query).expect("embed query");
    index
        .engine()
        .search_vector(index.namespace(), index.space(), &vector, k)
        .expect("engine search")
        .into_iter()
        .map(|hit| {
            (
                hit.record
                    .attribute(mb_rig::DOCUMENT_ID)
                    .expect("document id")
                    .to_owned(),
                f64::from(hit.score),
                hit.record.text.clone(),
            )
        })
        .collect()
}
