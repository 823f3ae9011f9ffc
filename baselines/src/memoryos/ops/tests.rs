//! Offline answers and reply parsing of the MemoryOS operations.

use super::*;

fn exchange(user: &str, assistant: &str) -> Exchange {
    Exchange {
        user: user.to_string(),
        assistant: assistant.to_string(),
    }
}

#[test]
fn continuity_parsing_and_offline() {
    let a = exchange("My collie Pixel chewed my shoes.", "Puppies chew a lot.");
    let b = exchange(
        "Pixel also chewed my socks today.",
        "Try chew toys for Pixel.",
    );
    let c = exchange("What is the capital of Peru?", "Lima.");
    let op = IsContinuous::new(a.clone(), b);
    assert_eq!(op.parse(" True."), Some(true));
    assert_eq!(op.parse("I think they are related"), Some(false));
    assert!(op.offline(Lang::En));
    assert!(!IsContinuous::new(a, c).offline(Lang::En));
}

#[test]
fn summaries_topics_and_profiles_offline() {
    let first = exchange("I started pottery classes. They are fun.", "Enjoy!");
    let summary = MetaSummary::new(None, first.clone()).offline(Lang::En);
    assert_eq!(summary, "I started pottery classes.");
    let next = MetaSummary::new(Some(summary), exchange("My bowls cracked.", "Oh no."));
    assert_eq!(
        next.offline(Lang::En),
        "I started pottery classes. My bowls cracked."
    );
    assert_eq!(next.fallback(), "I started pottery classes.");
    // Without sentence ends, a long chain's summary keeps its first and newest lines.
    let mut chain = None;
    for i in 0..50 {
        let said = exchange(&format!("turn {i} without an end"), "ok");
        chain = Some(MetaSummary::new(chain, said).offline(Lang::En));
    }
    assert_eq!(
        chain.as_deref(),
        Some("turn 0 without an end\nturn 49 without an end")
    );

    let topics = MultiTopicSummary::new(first.render()).offline(Lang::En);
    assert_eq!(topics.len(), 1);
    assert_eq!(
        topics[0].content,
        "User: I started pottery classes. They are fun."
    );

    let more = exchange("I started pottery classes. My sister loves them.", "Nice.");
    let profile =
        UpdateProfile::new(Some("I started pottery classes.".into()), vec![more]).offline(Lang::En);
    assert_eq!(profile, "I started pottery classes.\nMy sister loves them.");

    // A long conversation's profile keeps its newest statements within the cap.
    let mut profile = None;
    for i in 0..400 {
        let said = exchange(&format!("I visited museum number {i} today."), "ok");
        profile = Some(UpdateProfile::new(profile, vec![said]).offline(Lang::En));
    }
    let profile = profile.unwrap_or_default();
    assert!(profile.len() <= OFFLINE_PROFILE_CHARS, "{}", profile.len());
    assert!(
        profile.len() > OFFLINE_PROFILE_CHARS - 40,
        "{}",
        profile.len()
    );
    assert!(profile.ends_with("I visited museum number 399 today."));
    assert!(!profile.contains("number 0 today"));
}

#[test]
fn topics_parse_from_arrays_and_objects() {
    let op = MultiTopicSummary::new("");
    let text = r#"[{"theme": "pets", "keywords": ["dog"], "content": "A dog."},
                  {"theme": "work", "keywords": [], "content": "A job."},
                  {"theme": "extra", "keywords": [], "content": "Kept, as upstream keeps it."}]"#;
    assert_eq!(op.parse(text).unwrap().len(), 3);
    assert_eq!(op.parse_as_upstream(text).unwrap().len(), 3);
    assert_eq!(
        op.parse(r#"{"topics": [{"theme": "t", "keywords": ["k"], "content": "c"}]}"#)
            .unwrap()[0]
            .theme,
        "t"
    );
    assert_eq!(op.parse(r#"[{"theme": "no content"}]"#), None);
    // Upstream's json.loads: no fence removed, no object around the list.
    let fenced = format!("```json\n{text}\n```");
    assert_eq!(op.parse(&fenced).map(|t| t.len()), Some(3));
    assert_eq!(op.parse_as_upstream(&fenced), None);
}

#[test]
fn continuity_is_true_only_as_upstream_compares_it() {
    let op = IsContinuous::new(exchange("u", "a"), exchange("u", "a"));
    assert_eq!(op.parse_as_upstream(" TRUE \n"), Some(true));
    assert_eq!(op.parse_as_upstream("True."), Some(false));
    assert_eq!(op.parse("True."), Some(true));
}

#[test]
fn knowledge_sections_in_either_order() {
    let op = ExtractKnowledge::new(vec![]);
    let k = op
        .parse("[USER DATA]\nHas a collie named Pixel.\n[ASSISTANT KNOWLEDGE]\nNone")
        .unwrap();
    assert_eq!(k.user_private.as_deref(), Some("Has a collie named Pixel."));
    assert_eq!(k.assistant, None);
    let k = op
        .parse("[ASSISTANT KNOWLEDGE]\nCollies need exercise.\n[USER DATA]\nNone")
        .unwrap();
    assert_eq!(k.assistant.as_deref(), Some("Collies need exercise."));
    assert_eq!(k.user_private, None);
    assert_eq!(op.parse("no sections"), None);

    let offline = ExtractKnowledge::new(vec![exchange(
        "I have a collie. Is that a good breed?",
        "Collies are herding dogs. They need exercise. Brush them weekly.",
    )])
    .offline(Lang::En);
    assert_eq!(offline.user_private.as_deref(), Some("I have a collie."));
    assert_eq!(
        offline.assistant.as_deref(),
        Some("Collies are herding dogs. They need exercise.")
    );
}
