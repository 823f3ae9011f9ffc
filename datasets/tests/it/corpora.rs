//! The real LoCoMo and DialSim corpora of `../shared/data` (skipped when absent) parse into the
//! shapes and sizes upstream's loaders produce (counts from the reference, computed with
//! upstream's regular expressions).

use std::path::PathBuf;

use mb_datasets::corpus::{locomo_conversation, parse_dialsim};

fn data(file: &str) -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(file);
    let text = std::fs::read_to_string(&path).ok();
    if text.is_none() {
        mb_core::test_data::skip(&format!("{} not found", path.display()));
    }
    text
}

#[test]
fn dialsim_transcripts_convert_like_upstream() {
    for (show, sessions, turns) in [
        ("friends", 787, 18_648),
        ("bigbang", 805, 19_145),
        ("theoffice", 2_347, 19_160),
    ] {
        let Some(text) = data(&format!("dialsim/dialsim_corpus_{show}.txt")) else {
            return;
        };
        let conversation = parse_dialsim(&text);
        assert_eq!(conversation.sessions.len(), sessions, "{show} sessions");
        assert_eq!(conversation.turn_count(), turns, "{show} turns");
        assert_eq!(conversation.turn_documents().len(), turns);
        assert_eq!(conversation.session_documents().len(), sessions);
    }
}

#[test]
fn locomo_conversations_have_their_sessions_and_turns() {
    let Some(text) = data("locomo/locomo10-dev.json") else {
        return;
    };
    let samples: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    // Sessions and turns per sample, from the reference (samples 0–7 of locomo10.json).
    let expected = [
        (19, 419),
        (19, 369),
        (32, 663),
        (29, 629),
        (29, 680),
        (28, 675),
        (31, 689),
        (30, 681),
    ];
    for (sample, (sessions, turns)) in samples.iter().zip(expected) {
        let conversation = locomo_conversation(&sample["conversation"]).unwrap();
        assert_eq!(
            (conversation.sessions.len(), conversation.turn_count()),
            (sessions, turns)
        );
        let (doc_id, content) = &conversation.turn_documents()[0];
        assert!(
            content.starts_with(&format!("{doc_id}\nSpeaker ")),
            "{content}"
        );
        assert!(doc_id.ends_with(" Turn 1"), "{doc_id}");
    }
    let broken = serde_json::json!({"speaker_a": "A", "session_1": [{"speaker": "A"}]});
    let error = locomo_conversation(&broken).unwrap_err().to_string();
    assert!(
        error.contains("speaker_b") || error.contains("missing"),
        "{error}"
    );
}
