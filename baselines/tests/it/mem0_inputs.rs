//! What Mem0's fact extraction receives: a corpus turn as upstream's `Speaker <name>says :
//! <text>` line under the speaker's role (the second speaker as the assistant, whose facts count
//! too), and the run's date, never the clock's.

use std::sync::Arc;

use mb_baselines::mem0::Mem0;
use mb_baselines::MemorySystem;
use mb_core::clock::utc_date;
use mb_datasets::corpus::{Conversation, Session, Turn};
use mb_datasets::dataset::CorpusFormat;
use mb_llm::ops::{Backend, OutputHandling};
use mb_llm::testing::ScriptedProvider;
use mb_llm::Role;

use crate::common::{context, engine, offline};

fn turn(speaker: &str, n: usize, text: &str) -> Turn {
    Turn {
        speaker: speaker.into(),
        dia_id: format!("D1:{n}"),
        text: text.into(),
    }
}

fn conversation() -> Conversation {
    Conversation {
        speaker_a: Some("Caroline".into()),
        speaker_b: Some("Melanie".into()),
        sessions: vec![Session {
            date_time: "1:56 pm on 8 May, 2023".into(),
            turns: vec![
                turn("Caroline", 1, "I ran a charity race yesterday."),
                turn("Melanie", 2, "I went camping with my kids."),
            ],
        }],
    }
}

#[tokio::test]
async fn corpus_turns_reach_fact_extraction_as_upstream_sends_them() {
    let script = ScriptedProvider::then_always(&[], r#"{"facts": []}"#);
    let mut stack = Arc::try_unwrap(offline()).ok().unwrap();
    stack.memory = Backend::model(script.clone(), OutputHandling::Tolerant, 0);
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = context(engine(dir.path()), "mem0", Arc::new(stack));
    ctx.date = "2001-02-03".into();
    let memory = Mem0::new(ctx).unwrap();
    memory
        .memorize_corpus(&conversation(), CorpusFormat::Locomo)
        .await
        .unwrap();
    let requests = script.requests();
    assert_eq!(
        requests.len(),
        2,
        "one extraction per turn, no facts to decide on"
    );
    let sent: Vec<(Role, String)> = requests
        .iter()
        .map(|r| (r.messages[1].role, r.messages[1].content.clone()))
        .collect();
    assert_eq!(
        sent,
        vec![
            (
                Role::User,
                "Input:\nuser: Speaker Carolinesays : I ran a charity race yesterday.\n".into()
            ),
            (
                Role::User,
                "Input:\nassistant: Speaker Melaniesays : I went camping with my kids.\n".into()
            ),
        ]
    );
    for request in &requests {
        let system = &request.messages[0].content;
        assert!(system.contains("2001-02-03"), "{system}");
        assert!(
            !system.contains(&utc_date()),
            "the clock's date leaked: {system}"
        );
        assert!(
            system.contains("the assistant's messages alike"),
            "{system}"
        );
    }
}

#[tokio::test]
async fn offline_facts_come_from_both_speakers() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Mem0::new(context(engine(dir.path()), "mem0", offline())).unwrap();
    memory
        .memorize_corpus(&conversation(), CorpusFormat::Locomo)
        .await
        .unwrap();
    let history = memory.history(0).unwrap().unwrap();
    let texts: Vec<String> = history
        .iter()
        .filter_map(|e| e.new_memory.clone())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("I went camping")),
        "the second speaker's facts are kept: {texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("charity race")),
        "{texts:?}"
    );
}
