//! MemoryOS's filing against a scripted model, checked on the tiers themselves.

use std::sync::Arc;

use mb_core::Lang;
use mb_datasets::row::DialogMessage;
use mb_embed::HashingEmbedder;
use mb_engine::{Engine, EngineOptions};
use mb_llm::ops::Backend;
use mb_llm::testing::ScriptedProvider;
use mb_llm::{CacheMode, LlmSettings, LlmStack, Role};

use super::MemoryOs;
use crate::system::{MemoryContext, MemorySystem, SystemSettings, TrainingDialog};

fn message(role: Role, content: String) -> DialogMessage {
    DialogMessage {
        role,
        content,
        extra: Default::default(),
    }
}

#[tokio::test]
async fn a_new_session_is_keyworded_by_its_summary_alone() {
    let topic = r#"{"topics": [{"theme": "garden", "keywords": ["TopicKey"], "content": "The user grows tomatoes."}]}"#;
    let page = r#"[{"theme": "t", "keywords": ["PageKey"], "content": "c"}]"#;
    let summary = r#"[{"theme": "s", "keywords": ["SummaryKey", "Tomato"], "content": "c"}]"#;
    // Seven exchanges evict the first: its thread summary, the batch's topics, the page's
    // keywords, then the new session's summary keywords.
    let script = ScriptedProvider::then_always(
        &["The user talks about the garden.", topic, page, summary],
        "unexpected call",
    );
    let mut stack = LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).unwrap();
    stack.memory = Backend::model(script.clone(), 0);
    let dir = tempfile::tempdir().unwrap();
    let engine =
        Arc::new(Engine::open(dir.path().join("engine"), EngineOptions::default()).unwrap());
    let context = MemoryContext {
        engine,
        namespace: "os".into(),
        llm: Arc::new(stack),
        embedder: Some(Arc::new(HashingEmbedder::new(512))),
        lang: Lang::En,
        settings: SystemSettings::default(),
        date: "2023-05-08".into(),
    };
    let memory = MemoryOs::new(context).unwrap();
    let messages: Vec<DialogMessage> = (0..7)
        .flat_map(|i| {
            [
                message(Role::User, format!("I planted {i} tomatoes.")),
                message(Role::Assistant, format!("{i} tomatoes, lovely.")),
            ]
        })
        .collect();
    memory
        .memorize_dialog(TrainingDialog {
            test_idx: 0,
            dataset: "d",
            lang: Lang::En,
            messages: &messages,
        })
        .await
        .unwrap();
    assert_eq!(script.requests().len(), 4, "{:?}", script.operations());
    let tiers = memory.tiers.lock();
    assert_eq!(tiers.sessions.len(), 1);
    let session = &tiers.sessions[0];
    assert_eq!(session.summary, "The user grows tomatoes.");
    assert_eq!(session.keywords, vec!["SummaryKey", "Tomato"]);
    assert_eq!(session.pages[0].keywords, vec!["PageKey"]);
}
