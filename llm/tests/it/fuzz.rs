//! Fuzzing with seeded hostile text (`mb_llm::testing::HostileText`; `MB_FUZZ_CASES` runs more):
//! JSON extraction, every operation's reply parser and the settings files never panic, and a
//! settings error names its file.

use mb_baselines::amem::ops::{AnalyzeNote, EvolveNote, NoteView, QueryKeywords};
use mb_baselines::mem0::ops::{DecideMemoryUpdates, ExtractFacts, StoredMemory};
use mb_baselines::memoryos::ops::{
    Exchange, ExtractKnowledge, IsContinuous, MetaSummary, MultiTopicSummary, UpdateProfile,
};
use mb_llm::ops::{Answer, Operation, SimulateFeedback, UserPersona};
use mb_llm::testing::{fuzz_cases, HostileText};
use mb_llm::{extract_json, AnthropicProvider, ChatProvider, LlmSettings, Message, OpenAiProvider};
use serde_json::json;

use crate::providers::{config, request, serve, Reply};

fn exchange() -> Exchange {
    Exchange {
        user: "I moved to Lisbon.".into(),
        assistant: "Nice!".into(),
    }
}

fn note() -> NoteView {
    NoteView {
        content: "likes tea".into(),
        context: "drinks".into(),
        keywords: vec!["tea".into()],
        tags: vec!["food".into()],
        timestamp: "202405011200".into(),
    }
}

/// Every model operation (this crate's and the memory systems') parses `reply` (the result is not the point: no panic).
fn parse_everywhere(reply: &str) {
    let dialog = vec![
        Message::user("I moved to Lisbon."),
        Message::assistant("Nice!"),
    ];
    let _ = AnalyzeNote::new("likes tea").parse(reply);
    let _ = EvolveNote::new(note(), vec![note()]).parse(reply);
    let _ = Answer::new(dialog.clone()).parse(reply);
    let _ = ExtractFacts::new(dialog.clone(), "2024-05-01").parse(reply);
    let existing = vec![StoredMemory {
        id: "0".into(),
        text: "lives in Porto".into(),
    }];
    let _ = DecideMemoryUpdates::new(existing, vec!["lives in Lisbon".into()]).parse(reply);
    let persona = UserPersona {
        persona: "a reader".into(),
        expertise: "none".into(),
        criteria: vec!["short".into()],
    };
    let _ = SimulateFeedback::new(persona, "write a story", dialog).parse(reply);
    let _ = QueryKeywords::new("Where does the dog live?", 5).parse(reply);
    let _ = IsContinuous::new(exchange(), exchange()).parse(reply);
    let _ = MetaSummary::new(None, exchange()).parse(reply);
    let _ = MultiTopicSummary::new("User: hi\nAssistant: hello").parse(reply);
    let _ = UpdateProfile::new(Some("likes tea".into()), vec![exchange()]).parse(reply);
    let _ = ExtractKnowledge::new(vec![exchange()]).parse(reply);
}

#[test]
fn hostile_replies_never_panic_a_parser() {
    let mut texts = HostileText::new(7);
    for _ in 0..fuzz_cases(2_000) {
        let text = texts.next_text();
        let _ = extract_json(&text);
        parse_everywhere(&text);
    }
}

#[test]
fn mutated_settings_files_never_panic_and_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mutated.toml");
    let shipped: Vec<String> = ["paper", "local", "offline"]
        .iter()
        .map(|name| {
            let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/llm/").to_string();
            std::fs::read_to_string(format!("{file}{name}.toml")).unwrap()
        })
        .collect();
    let mut texts = HostileText::new(11);
    for case in 0..fuzz_cases(1_000) {
        let mut text = shipped[case % shipped.len()].clone();
        for _ in 0..1 + case % 3 {
            texts.mutate(&mut text);
        }
        std::fs::write(&path, &text).unwrap();
        if let Err(error) = LlmSettings::from_file(&path) {
            let message = error.to_string();
            assert!(message.contains("mutated.toml"), "{message}\n---\n{text}");
        }
    }
}

#[tokio::test]
async fn hostile_response_bodies_are_errors_or_answers_never_panics() {
    let openai = json!({
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1}
    })
    .to_string();
    let anthropic = json!({
        "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 3, "output_tokens": 1}
    })
    .to_string();
    let cases = fuzz_cases(300);
    let mut texts = HostileText::new(13);
    let bodies: Vec<String> = (0..cases)
        .map(|case| match case % 3 {
            0 => texts.next_text(),
            1 => {
                let mut body = openai.clone();
                texts.mutate(&mut body);
                body
            }
            _ => {
                let mut body = anthropic.clone();
                texts.mutate(&mut body);
                body
            }
        })
        .collect();
    let served = std::sync::Arc::new(bodies);
    let script = served.clone();
    let (base, _) =
        serve(move |n, _| Reply::Status(200, script[(n / 2) % script.len()].clone(), None));
    let settings = {
        let mut built = config(&base);
        built.max_retries = 0;
        built
    };
    let openai = OpenAiProvider::new(settings.clone()).unwrap();
    let anthropic = AnthropicProvider::new(settings).unwrap();
    for _ in 0..cases {
        // Each body goes to both wire formats (request n and n + 1 get body n / 2).
        let _ = openai.complete(&request()).await;
        let _ = anthropic.complete(&request()).await;
    }
}
