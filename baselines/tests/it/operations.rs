//! Running the memory systems' typed operations on a model: unusable output handled as upstream does (resends,
//! strict readings) or tolerantly (re-asks), fallbacks, errors.

use std::collections::BTreeMap;

use mb_baselines::amem::ops::QueryKeywords;
use mb_baselines::mem0::ops::{DecideMemoryUpdates, ExtractFacts, MemoryEventKind};
use mb_core::Lang;
use mb_llm::ops::{Backend, OutputHandling};
use mb_llm::testing::ScriptedProvider;
use mb_llm::{usage_of, LlmError, Message, ResponseFormat, Role};

fn dialog() -> Vec<Message> {
    vec![Message::user("I moved to Lisbon and I adopted a dog.")]
}

#[tokio::test]
async fn unusable_output_is_re_asked_then_parsed() {
    let provider = ScriptedProvider::new(&[
        "Sure, the user moved to Lisbon.",
        "```json\n{\"facts\": [\"Moved to Lisbon\", \"Adopted a dog\"]}\n```",
    ]);
    let backend = Backend::model(provider.clone(), OutputHandling::Tolerant, 2);
    let facts = backend
        .run(&ExtractFacts::new(dialog(), "2024-05-01"), Lang::En)
        .await
        .unwrap();
    assert_eq!(facts, vec!["Moved to Lisbon", "Adopted a dog"]);
    assert!(backend.fallbacks().is_empty());

    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].operation, "extract_facts");
    assert!(requests[0].messages[0].content.contains("2024-05-01"));
    let second = &requests[1].messages;
    assert_eq!(second.len(), requests[0].messages.len() + 2);
    assert_eq!(second[second.len() - 2].role, Role::Assistant);
    assert_eq!(
        second[second.len() - 2].content,
        "Sure, the user moved to Lisbon."
    );
}

#[tokio::test]
async fn persistent_garbage_ends_in_the_counted_fallback() {
    let provider = ScriptedProvider::new(&["no", "still no", "nope"]);
    let backend = Backend::model(provider.clone(), OutputHandling::Tolerant, 2);
    let events = backend
        .run(
            &DecideMemoryUpdates::new(vec![], vec!["搬到了里斯本".into()]),
            Lang::Zh,
        )
        .await
        .unwrap();
    assert!(events.is_empty(), "upstream's fallback: no events");
    assert_eq!(backend.fallbacks().get("decide_memory_updates"), Some(&1));
    let requests = provider.requests();
    assert_eq!(requests.len(), 3, "one call and two re-asks");
    assert!(requests[0].messages[0].content.contains("已存记忆"));
}

#[tokio::test]
async fn parsed_events_and_response_formats_reach_the_caller() {
    let provider = ScriptedProvider::new(&[
        r#"{"memory": [{"id": "0", "text": "Lives in Lisbon", "event": "ADD"}]}"#,
        r#"{"keywords": ["Lisbon", "dog"]}"#,
    ]);
    let backend = Backend::model(provider.clone(), OutputHandling::Tolerant, 0);
    let events = backend
        .run(
            &DecideMemoryUpdates::new(vec![], vec!["Lives in Lisbon".into()]),
            Lang::En,
        )
        .await
        .unwrap();
    assert_eq!(events[0].event, MemoryEventKind::Add);
    let keywords = backend
        .run(&QueryKeywords::new("Where does the dog live?", 5), Lang::En)
        .await
        .unwrap();
    assert_eq!(keywords, "Lisbon, dog");
    let requests = provider.requests();
    assert!(matches!(
        requests[1].response_format,
        Some(ResponseFormat::JsonSchema { .. })
    ));
}

#[tokio::test]
async fn provider_errors_are_errors_not_fallbacks() {
    let provider = ScriptedProvider::new(&[]);
    let backend = Backend::model(provider, OutputHandling::Tolerant, 2);
    let error = backend
        .run(&ExtractFacts::new(dialog(), "2024-05-01"), Lang::En)
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Rejected { .. }));
    assert!(backend.fallbacks().is_empty());
}

#[tokio::test]
async fn a_scope_sees_its_fallbacks_and_offline_operations() {
    let garbage = Backend::model(
        ScriptedProvider::then_always(&[], "garbage"),
        OutputHandling::Tolerant,
        1,
    );
    let (facts, usage) = usage_of(async {
        garbage
            .run(&ExtractFacts::new(dialog(), "2024-05-01"), Lang::En)
            .await
            .unwrap()
    })
    .await;
    assert!(facts.is_empty(), "upstream's fallback: no facts");
    assert_eq!(
        usage.fallbacks,
        BTreeMap::from([("extract_facts".to_string(), 1)])
    );
    assert_eq!(usage.fallback_count(), 1);

    let offline = Backend::offline();
    let ((), usage) = usage_of(async {
        for _ in 0..2 {
            offline
                .run(&QueryKeywords::new("Where does the dog live?", 5), Lang::En)
                .await
                .unwrap();
        }
    })
    .await;
    assert_eq!(usage.offline_operations, 2);
    assert_eq!(usage.llm_calls(), 2);
    assert!(usage.fallbacks.is_empty());
}

#[tokio::test]
async fn upstream_handling_reads_strictly_and_falls_back_without_asking_again() {
    // Mem0: a fence is removed, prose around the JSON is not; no second request.
    let provider = ScriptedProvider::new(&[
        "Sure! {\"facts\": [\"Moved to Lisbon\"]}",
        "```json\n{\"facts\": [\"Moved to Lisbon\"]}\n```",
    ]);
    let backend = Backend::model(provider.clone(), OutputHandling::Upstream, 2);
    let extract = ExtractFacts::new(dialog(), "2024-05-01");
    assert!(backend.run(&extract, Lang::En).await.unwrap().is_empty());
    assert_eq!(backend.fallbacks().get("extract_facts"), Some(&1));
    assert_eq!(
        provider.requests().len(),
        1,
        "no re-ask, whatever reasks says"
    );
    let facts = backend.run(&extract, Lang::En).await.unwrap();
    assert_eq!(facts, vec!["Moved to Lisbon"]);
    assert!(backend.take_resends().is_empty());
}

#[tokio::test]
async fn upstream_handling_resends_the_same_request_until_a_keyword_reply_parses() {
    let provider = ScriptedProvider::new(&[
        "Lisbon, dog",
        "{\"keywords\": [\"Lisbon\"]}",
        "{\"keywords\": \"Lisbon, dog\"}",
    ]);
    let backend = Backend::model(provider.clone(), OutputHandling::Upstream, 0);
    let keywords = backend
        .run(&QueryKeywords::new("Where does the dog live?", 5), Lang::En)
        .await
        .unwrap();
    assert_eq!(keywords, "Lisbon, dog");
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    // The same messages each time, told apart only by the resend count.
    assert_eq!(requests[0].messages, requests[2].messages);
    assert_eq!(
        requests.iter().map(|r| r.resend).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(
        backend.take_resends(),
        BTreeMap::from([("query_keywords", 2)])
    );
    assert!(backend.fallbacks().is_empty());
}

#[tokio::test]
async fn a_keyword_request_that_never_parses_stops_at_the_cap_counted() {
    let provider = ScriptedProvider::then_always(&[], "no JSON here");
    let backend = Backend::model(provider.clone(), OutputHandling::Upstream, 0);
    let keywords = backend
        .run(&QueryKeywords::new("Where does the dog live?", 5), Lang::En)
        .await
        .unwrap();
    assert_eq!(
        keywords, "Where does the dog live?",
        "the fallback: the query is embedded instead"
    );
    assert_eq!(
        provider.requests().len() as u32,
        mb_llm::ops::handling::RESEND_CAP
    );
    assert_eq!(
        backend.take_cap_hits(),
        BTreeMap::from([("query_keywords", 1)])
    );
    assert_eq!(backend.fallbacks().get("query_keywords"), Some(&1));
}

#[tokio::test]
async fn tolerant_handling_never_gives_an_operation_less_patience_than_upstream() {
    // reasks = 0 (configs/llm/local.toml) still lets the keyword request be sent again.
    let provider = ScriptedProvider::new(&["nothing", "{\"keywords\": [\"dog\"]}"]);
    let backend = Backend::model(provider.clone(), OutputHandling::Tolerant, 0);
    let keywords = backend
        .run(&QueryKeywords::new("Where does the dog live?", 5), Lang::En)
        .await
        .unwrap();
    assert_eq!(keywords, "dog");
    assert_eq!(provider.requests().len(), 2);
}
