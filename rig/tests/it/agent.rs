//! rig's retrieval, run by a rig agent, through the engine index.

use mb_rig::offline::{self, ContextEcho};
use mb_rig::rig_core::completion::CompletionRequest;
use rig_agent::AgentBuilder;

use crate::common::{engine, engine_ranking, filled_index, hashing, memories, NAMESPACE};

/// The (id, text) of every context document in a request, in order.
fn sent_documents(request: &CompletionRequest) -> Vec<(String, String)> {
    request
        .documents
        .iter()
        .map(|document| (document.id.clone(), document.text.clone()))
        .collect()
}

/// Everything a request carries, as one string: documents, history and preamble.
fn request_text(request: &CompletionRequest) -> String {
    format!("{:?} {:?}", request.documents, request.chat_history)
}

/// The documents the engine ranks first for the prompt, and only those, reach the model, in the
/// engine's order; the offline model answers with the first.
#[tokio::test]
async fn dynamic_context_sends_the_engines_top_documents_to_the_model() {
    let (_dir, engine) = engine();
    let (index, ids) = filled_index(&engine, hashing());
    let prompt = "Which dog was adopted?";
    let expected = engine_ranking(&index, prompt, 2);

    let echo = ContextEcho::new();
    let agent = AgentBuilder::new(echo.model())
        .preamble("Answer from memory.")
        .dynamic_context(2, index.clone())
        .build();
    let response = agent.prompt(prompt).await.expect("agent run");

    let requests = echo.requests();
    assert_eq!(requests.len(), 1, "one completion call");
    let sent = sent_documents(&requests[0]);
    let sent_ids: Vec<&str> = sent.iter().map(|(id, _)| id.as_str()).collect();
    let expected_ids: Vec<&str> = expected.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(sent_ids, expected_ids, "the engine's top 2, in its order");
    for ((_, text), (_, _, record_text)) in sent.iter().zip(&expected) {
        assert!(
            text.contains(record_text.as_str()),
            "{text} lacks {record_text}"
        );
    }

    // No other memory reaches the model, by id or by text.
    let everything = request_text(&requests[0]);
    let all = memories();
    for (id, memory) in ids.iter().zip(&all) {
        if !expected_ids.contains(&id.as_str()) {
            assert!(!everything.contains(id.as_str()), "{id} was sent");
            assert!(
                !everything.contains(&memory.text),
                "{} was sent",
                memory.text
            );
        }
    }
    assert!(everything.contains(prompt));

    // The stand-in answers with the first document: the dog memory for a question on the dog.
    assert_eq!(response.output(), offline::answer(&requests[0]));
    assert!(response.output().contains("Pixel"), "{}", response.output());
}

/// Each prompt retrieves for itself: one agent, two questions, two different contexts, each the
/// engine's ranking for its own question.
#[tokio::test]
async fn every_prompt_retrieves_its_own_context() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    let echo = ContextEcho::new();
    let agent = AgentBuilder::new(echo.model())
        .dynamic_context(1, index.clone())
        .build();
    let prompts = ["Which dog was adopted?", "Which bowls cracked in the kiln?"];
    for prompt in prompts {
        agent.prompt(prompt).await.expect("agent run");
    }
    let requests = echo.requests();
    assert_eq!(requests.len(), prompts.len());
    let mut firsts = Vec::new();
    for (request, prompt) in requests.iter().zip(prompts) {
        let expected = engine_ranking(&index, prompt, 1);
        let sent = sent_documents(request);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, expected[0].0, "{prompt}");
        firsts.push(sent[0].0.clone());
    }
    assert_ne!(
        firsts[0], firsts[1],
        "different questions, different memories"
    );
    assert!(sent_documents(&requests[1])[0].1.contains("kiln"));
}

/// When retrieval fails (here: the namespace is gone), the run fails before the model is
/// called, with the engine's reason, and nothing panics.
#[tokio::test]
async fn a_failing_retrieval_stops_the_run_with_the_engines_message() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    engine.drop_namespace(NAMESPACE).expect("drop namespace");
    let echo = ContextEcho::new();
    let agent = AgentBuilder::new(echo.model())
        .dynamic_context(2, index)
        .build();
    let error = agent
        .prompt("Which dog was adopted?")
        .await
        .expect_err("retrieval from a dropped namespace fails");
    assert!(error.to_string().contains("unknown namespace"), "{error}");
    assert!(echo.requests().is_empty(), "the model was not called");
}
