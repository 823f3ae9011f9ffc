//! The simulated user's request with upstream's wording: the row's evaluator's messages, its
//! feedback schema and its sampling go out; a row upstream's code raises on sends nothing and
//! falls back as upstream does; without the row, or without `--upstream`, the paraphrase.

use mb_core::Lang;
use mb_llm::ops::{
    Backend, ImplicitAction, Operation, OutputHandling, SimulateFeedback, UserPersona,
};
use mb_llm::testing::ScriptedProvider;
use mb_llm::{Message, ResponseFormat, Sampling};
use mb_upstream::{Upstream, Wording};
use serde_json::{json, Map, Value};

/// Upstream's checkout beside the project, or `None` after a `skipped:` line (a failure under
/// CI).
fn upstream() -> Option<Upstream> {
    Some(Upstream::open(&mb_core::test_data::upstream_checkout()?).unwrap())
}

fn conversation() -> Vec<Message> {
    vec![
        Message::user("Identify three limitations of the paper's experiments."),
        Message::assistant("1. No ablation. 2. One dataset. 3. No baseline."),
    ]
}

fn operation() -> SimulateFeedback {
    let persona = UserPersona {
        persona: "an expert reviewer".into(),
        expertise: "peer review".into(),
        criteria: vec!["specific limitations".into()],
    };
    SimulateFeedback::new(persona, "limitations of a paper", conversation())
}

fn info() -> Map<String, Value> {
    serde_json::from_value(json!({"ground_truth": "missing baseline", "category": "baseline"}))
        .unwrap()
}

const REPLY: &str = r#"{"reasoning": "close", "implicit_action": "dislike", "behavior": "continue_conversation", "response": "What about baselines?"}"#;

#[tokio::test]
async fn with_upstreams_wording_the_simulator_sends_upstreams_request() {
    let Some(checkout) = upstream() else { return };
    let expected = checkout
        .simulator_request("LimitGen-Syn", &conversation(), "en", &info())
        .unwrap();
    let provider = ScriptedProvider::new(&[REPLY]);
    let backend = Backend::model(provider.clone(), OutputHandling::Upstream, 0)
        .with_wording(Wording::upstream(checkout));
    let op = operation().with_row("LimitGen-Syn", info());
    let feedback = backend.run(&op, Lang::En).await.unwrap();
    assert_eq!(feedback.implicit_action, ImplicitAction::Dislike);
    assert_eq!(feedback.response.as_deref(), Some("What about baselines?"));

    let sent = &provider.requests()[0];
    assert_eq!(sent.messages, expected.messages);
    assert_eq!(
        sent.response_format,
        Some(ResponseFormat::JsonSchema {
            name: expected.schema.name.clone(),
            schema: expected.schema.schema.clone(),
            strict: false,
        })
    );
    // Upstream's: temperature 0.7 and 1 000 tokens, its client's top-p 0.1 (the Python-backed
    // test of mb-upstream checks upstream sends these).
    assert_eq!(sent.sampling, Sampling::new(0.7, 0.1, 1000));
    assert!(backend.fallbacks().is_empty());
}

#[tokio::test]
async fn a_row_upstreams_code_raises_on_sends_nothing_and_ends_the_conversation() {
    let Some(checkout) = upstream() else { return };
    let provider = ScriptedProvider::new(&[REPLY]);
    let backend = Backend::model(provider.clone(), OutputHandling::Upstream, 0)
        .with_wording(Wording::upstream(checkout));
    let op = operation().with_row("Mystery", info());
    let feedback = backend.run(&op, Lang::En).await.unwrap();
    assert!(feedback.should_end());
    assert_eq!(feedback.implicit_action, ImplicitAction::None);
    assert!(provider.requests().is_empty());
    assert_eq!(backend.fallbacks().get("simulate_feedback"), Some(&1));
}

#[tokio::test]
async fn without_the_row_or_upstreams_wording_the_paraphrase_goes_out() {
    let Some(checkout) = upstream() else { return };
    let wording = Wording::upstream(checkout);
    let provider = ScriptedProvider::new(&[REPLY, REPLY]);
    let backend =
        Backend::model(provider.clone(), OutputHandling::Upstream, 0).with_wording(wording.clone());
    backend.run(&operation(), Lang::En).await.unwrap();
    assert_eq!(wording.paraphrased_prompts(), vec!["simulate_feedback"]);

    let paraphrased = Backend::model(provider.clone(), OutputHandling::Upstream, 0);
    let op = operation().with_row("LimitGen-Syn", info());
    paraphrased.run(&op, Lang::En).await.unwrap();
    let sent = provider.requests();
    for request in &sent {
        assert_eq!(request.messages, op.messages(Lang::En));
        assert_eq!(request.response_format, op.response_format());
    }
}
