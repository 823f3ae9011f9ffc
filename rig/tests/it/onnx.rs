//! The in-process all-MiniLM-L6-v2 embedder behind the index: retrieval by meaning, not words.
//!
//! Needs `bash scripts/setup.sh` (ONNX Runtime and the model under `.cache/`).

use std::sync::Arc;

use mb_embed::OnnxEmbedder;
use mb_rig::offline::ContextEcho;
use rig_agent::AgentBuilder;

use crate::common::{engine, engine_ranking, filled_index, Memory};

#[tokio::test]
async fn an_agent_over_the_onnx_embedder_retrieves_by_meaning() {
    let embedder = match OnnxEmbedder::open_default() {
        Ok(embedder) => embedder,
        Err(error) => panic!("{error}"),
    };
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, Arc::new(embedder));

    // No word of the question (longer than two letters) is in the answer's memory.
    let prompt = "Who got a new puppy?";
    let expected = engine_ranking(&index, prompt, 2);
    assert!(expected[0].2.contains("Pixel"), "{expected:?}");

    let echo = ContextEcho::new();
    let agent = AgentBuilder::new(echo.model())
        .dynamic_context(2, index.clone())
        .build();
    let response = agent.prompt(prompt).await.expect("agent run");
    let requests = echo.requests();
    let sent: Vec<&str> = requests[0]
        .documents
        .iter()
        .map(|d| d.id.as_str())
        .collect();
    let want: Vec<&str> = expected.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(sent, want);
    let answer: Memory = serde_json::from_str(response.output()).expect("a memory");
    assert_eq!(answer.speaker, "Maya");
    assert!(answer.text.contains("Pixel"));
}
