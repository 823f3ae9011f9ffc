//! A rig agent whose memory is mb-engine.
//!
//! The agent's memories are chat turns stored in an engine namespace through
//! [`EngineIndex`](mb_rig::EngineIndex), embedded in-process by all-MiniLM-L6-v2. For every
//! question, rig's `dynamic_context` retrieves the two most relevant memories through the index
//! and hands them to the completion model with the question.
//!
//! By default the completion model is [`ContextEcho`], an offline stand-in that answers with the
//! most relevant memory it was given (there is no LLM here): the run shows what retrieval gives
//! the model. With `--openai MODEL` a real model answers, through rig's OpenAI chat-completions
//! wire, at the endpoint of `OPENAI_BASE_URL` with the key of `OPENAI_API_KEY`.
//!
//! Run (after `bash scripts/setup.sh`):
//! `cargo run -p mb-rig --release --example rig_agent [-- --openai MODEL] [--dir ENGINE_DIR]`

mod openai;

use std::sync::Arc;

use mb_embed::OnnxEmbedder;
use mb_engine::{Engine, EngineOptions};
use mb_rig::offline::ContextEcho;
use mb_rig::rig_core::embeddings::{EmbedError, TextEmbedder};
use mb_rig::rig_core::vector_store::request::SearchFilter;
use mb_rig::rig_core::vector_store::{VectorSearchRequest, VectorStoreIndex};
use mb_rig::rig_core::{DynModel, Embed};
use mb_rig::{EngineIndex, RigFilter};
use rig_agent::AgentBuilder;
use serde::{Deserialize, Serialize};

/// One remembered chat turn. Its fields become engine attributes, so rig filters can select on
/// the speaker or the session.
#[derive(Debug, Serialize, Deserialize)]
struct Memory {
    speaker: String,
    session: u32,
    text: String,
}

/// rig embeds a memory by its text.
impl Embed for Memory {
    fn embed(&self, embedder: &mut TextEmbedder) -> Result<(), EmbedError> {
        embedder.embed(format!("{} says: {}", self.speaker, self.text));
        Ok(())
    }
}

/// (session, speaker, text)
const CONVERSATION: &[(u32, &str, &str)] = &[
    (
        1,
        "Maya",
        "I finally adopted a dog last weekend, a border collie named Pixel.",
    ),
    (1, "Jon", "I started pottery classes on Thursday evenings."),
    (
        1,
        "Jon",
        "I'm making a set of blue bowls as a present for my sister's wedding in June.",
    ),
    (
        2,
        "Maya",
        "I signed up for the Lisbon half marathon in October.",
    ),
    (
        2,
        "Maya",
        "The physiotherapist said my knee can take three runs a week.",
    ),
    (
        2,
        "Jon",
        "My bowls cracked in the kiln, so I have to start over.",
    ),
    (
        2,
        "Jon",
        "I'm switching jobs: I'll be a data engineer at a bike-sharing company.",
    ),
];

const QUESTIONS: &[&str] = &[
    "What is the name of Maya's dog?",
    "What present is Jon making for the wedding?",
    "Which race is Maya training for?",
    "What will Jon's new job be?",
];

/// Command line: `--openai MODEL` and `--dir ENGINE_DIR`, both optional.
struct Args {
    openai: Option<String>,
    dir: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut parsed = Args {
        openai: None,
        dir: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--openai" => parsed.openai = Some(value),
            "--dir" => parsed.dir = Some(value),
            other => {
                return Err(format!(
                    "unknown argument {other}; use --openai MODEL, --dir DIR"
                ))
            }
        }
    }
    Ok(parsed)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = args()?;
    let scratch = tempfile::tempdir()?;
    let dir = match &args.dir {
        Some(dir) => std::path::PathBuf::from(dir),
        None => scratch.path().join("engine"),
    };

    // The memory store: an engine namespace, searched by rig through the index.
    let engine = Arc::new(Engine::open(&dir, EngineOptions::default())?);
    let embedder = Arc::new(OnnxEmbedder::open_default()?);
    let index = EngineIndex::create(engine.clone(), "maya-and-jon", embedder)?;
    let memories = CONVERSATION.iter().map(|(session, speaker, text)| Memory {
        speaker: speaker.to_string(),
        session: *session,
        text: text.to_string(),
    });
    let ids = index.insert(memories)?;
    println!("stored {} memories in {}", ids.len(), dir.display());

    // The completion model: the offline stand-in, or a real one if asked for.
    let echo = ContextEcho::new();
    let model: DynModel<_> = match &args.openai {
        None => {
            println!("model: offline stand-in (answers with the most relevant memory)");
            echo.model().erase()
        }
        Some(name) => {
            let model = openai::chat_model(name)?;
            println!("model: {name} at the OpenAI-compatible endpoint of OPENAI_BASE_URL");
            model
        }
    };
    let agent = AgentBuilder::new(model)
        .preamble(
            "You are a friend of Maya and Jon. Answer in one sentence from the memories given.",
        )
        .dynamic_context(2, index.clone())
        .build();

    for question in QUESTIONS {
        let response = agent.prompt(*question).await?;
        println!("\nQ: {question}\nA: {}", one_line(response.output()));
        if let Some(request) = echo.requests().last() {
            for document in &request.documents {
                println!("   context {}: {}", document.id, one_line(&document.text));
            }
        }
    }

    // rig filters run in the engine: Jon's memories only.
    let request = VectorSearchRequest::builder()
        .query("What is Jon working on?")
        .samples(2)
        .filter(RigFilter::eq("speaker", serde_json::json!("Jon")))
        .build();
    println!("\nJon's memories closest to \"What is Jon working on?\":");
    for (score, _id, memory) in index.top_n::<Memory>(request).await? {
        println!("   {score:.3} {}", memory.text);
    }

    drop(agent);
    drop(index);
    if let Ok(engine) = Arc::try_unwrap(engine) {
        engine.close()?;
    }
    Ok(())
}

/// A context document or an answer (pretty-printed JSON for the stand-in) on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
