//! MemoryOS's filing against a scripted model, checked on the tiers themselves.

use std::sync::Arc;

use mb_core::Lang;
use mb_embed::HashingEmbedder;
use mb_engine::{Engine, EngineOptions};
use mb_llm::ops::{Backend, Operation, OutputHandling};

use super::ops::MetaSummary;
use mb_llm::testing::ScriptedProvider;
use mb_llm::{CacheMode, LlmSettings, LlmStack, Message, Role};

use mb_engine::Batch;

use super::tiers::{number, Page, Tiers};
use super::{exchange, stored, MemoryOs};
use super::{MemoryOsSettings, ThreadSummaries};
use crate::system::{MemoryContext, MemorySystem, SystemSettings, TrainingDialog};

fn message(role: Role, content: String) -> Message {
    Message { role, content }
}

#[tokio::test]
async fn a_new_session_is_keyworded_by_its_summary_alone() {
    let topic = r#"{"topics": [{"theme": "garden", "keywords": ["TopicKey"], "content": "The user grows tomatoes."}]}"#;
    let page = r#"[{"theme": "t", "keywords": ["PageKey"], "content": "c"}]"#;
    let summary = r#"[{"theme": "s", "keywords": ["SummaryKey", "Tomato"], "content": "c"}]"#;
    // Seven exchanges evict the first: its thread summary, the batch's topics, then the new
    // session's summary keywords before its page's keywords (upstream's `add_session`).
    let script = ScriptedProvider::then_always(
        &["The user talks about the garden.", topic, summary, page],
        "unexpected call",
    );
    let mut stack = LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).unwrap();
    stack.memory = Backend::model(script.clone(), OutputHandling::Tolerant, 0);
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
    let messages: Vec<Message> = (0..7)
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
            metadata: None,
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

/// An offline MemoryOS in `namespace` of `engine` that files one-sided turns as pages.
fn offline_memory(engine: Arc<Engine>, namespace: &str) -> MemoryOs {
    offline_memory_showing(engine, namespace, ThreadSummaries::default())
}

/// [`offline_memory`] whose pages show `summaries` of their thread.
fn offline_memory_showing(
    engine: Arc<Engine>,
    namespace: &str,
    summaries: ThreadSummaries,
) -> MemoryOs {
    let stack = LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).unwrap();
    let settings = SystemSettings::default()
        .with_own(
            &MemoryOsSettings::default()
                .keeping_one_sided(true)
                .showing(summaries),
        )
        .unwrap();
    MemoryOs::new(MemoryContext {
        engine,
        namespace: namespace.into(),
        llm: Arc::new(stack),
        embedder: Some(Arc::new(HashingEmbedder::new(64))),
        lang: Lang::En,
        settings,
        date: "2023-05-08".into(),
    })
    .unwrap()
}

/// A conversation of `turns` turns that keeps returning to a few topics, so that pages join
/// existing sessions, chains grow and break, and sessions heat up.
fn conversation(turns: usize) -> Vec<Message> {
    let topics = [
        "my garden tomatoes need water every morning",
        "the chess club meets on tuesday evenings",
        "my sister visits from lisbon next month",
    ];
    (0..turns)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            message(role, format!("{} again, turn {i}", topics[(i / 5) % 3]))
        })
        .collect()
}

async fn memorize(memory: &MemoryOs, messages: &[Message]) {
    memory
        .memorize_dialog(TrainingDialog {
            test_idx: 0,
            dataset: "d",
            lang: Lang::En,
            messages,
            metadata: None,
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn tiers_written_change_by_change_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let engine =
        Arc::new(Engine::open(dir.path().join("engine"), EngineOptions::default()).unwrap());
    let memory = offline_memory(engine.clone(), "os");
    memorize(&memory, &conversation(120)).await;
    memory
        .retrieve("when does the chess club meet", Lang::En, 7)
        .await
        .unwrap();
    let written = memory.tiers.lock().clone();
    assert!(
        written.sessions.len() > 1,
        "{} sessions",
        written.sessions.len()
    );
    assert!(written.sessions.iter().any(|s| s.pages.len() > 3));
    assert!(written
        .sessions
        .iter()
        .flat_map(|s| &s.pages)
        .any(|p| p.pre_page.is_some()));
    assert!(written.long_term.profile.is_some());
    let reopened = offline_memory(engine, "os").tiers.lock().clone();
    assert_eq!(reopened, written);
}

#[tokio::test]
async fn a_write_holds_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let engine =
        Arc::new(Engine::open(dir.path().join("engine"), EngineOptions::default()).unwrap());
    let memory = offline_memory(engine, "os");
    memorize(&memory, &conversation(60)).await;
    let old = memory.tiers.lock().clone();
    let pages = |t: &Tiers| t.sessions.iter().map(|s| s.pages.len()).sum::<usize>();
    assert!(pages(&old) > 10);
    let written = |new: &Tiers| {
        let mut batch = Batch::new();
        stored::write_changes(&mut batch, &old, new).unwrap();
        batch.len()
    };
    // Nothing changed: the core alone.
    assert_eq!(written(&old.clone()), 1);
    // A visit: the core and that session's head, none of its pages.
    let mut visited = old.clone();
    Arc::make_mut(&mut visited.sessions[0]).n_visit += 1;
    assert_eq!(written(&visited), 2);
    // One page changed: its head and that page.
    let mut changed = old.clone();
    let session = Arc::make_mut(&mut changed.sessions[0]);
    Arc::make_mut(&mut session.pages[0])
        .meta_info
        .push_str(" more");
    assert_eq!(written(&changed), 3);
    // An analysis: the core and the long-term tier.
    let mut analyzed = old.clone();
    Arc::make_mut(&mut analyzed.long_term).profile = Some("likes tomatoes".into());
    assert_eq!(written(&analyzed), 2);
    // A session dropped: its head and each of its pages deleted.
    let mut dropped = old.clone();
    let gone = dropped.sessions.remove(0);
    assert_eq!(written(&dropped), 2 + gone.pages.len());
}

#[tokio::test]
async fn sessions_stored_whole_by_an_older_version_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let engine =
        Arc::new(Engine::open(dir.path().join("engine"), EngineOptions::default()).unwrap());
    engine
        .create_namespace("os", mb_engine::NamespaceOptions::default())
        .unwrap();
    let mut batch = Batch::new();
    batch.put_state("session/session_3", &1u32).unwrap();
    engine.write("os", batch).unwrap();
    let stack = LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).unwrap();
    let Err(e) = MemoryOs::new(MemoryContext {
        engine,
        namespace: "os".into(),
        llm: Arc::new(stack),
        embedder: Some(Arc::new(HashingEmbedder::new(64))),
        lang: Lang::En,
        settings: SystemSettings::default(),
        date: "2023-05-08".into(),
    }) else {
        panic!("an old layout was read");
    };
    assert!(e.to_string().contains("older memorybench"), "{e}");
}

/// Every page the memory files, by number, with the summary it shows.
fn pages_shown(memory: &MemoryOs) -> std::collections::BTreeMap<u64, (Page, String)> {
    let tiers = memory.tiers.lock();
    tiers
        .sessions
        .iter()
        .flat_map(|s| s.pages.iter())
        .map(|p| (number(&p.id), ((**p).clone(), tiers.meta_of(p).to_string())))
        .collect()
}

#[tokio::test]
async fn a_page_shows_the_thread_summary_it_was_filed_with_as_memoryos_chromadb_does() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let memory = offline_memory_showing(engine.clone(), "chroma", ThreadSummaries::AsInserted);
    memorize(&memory, &conversation(60)).await;
    let pages = pages_shown(&memory);
    // memoryos_chromadb: a page's summary is made once, from the previous page's own summary
    // when the exchange continues it; the chain's earlier pages are never rewritten.
    let mut expected: std::collections::BTreeMap<u64, String> = Default::default();
    let (mut chained, mut differing) = (0, 0);
    for (n, (page, shown)) in &pages {
        let previous = page
            .pre_page
            .as_deref()
            .map(|id| expected.get(&number(id)).cloned().unwrap_or_default());
        let made = MetaSummary::new(previous.clone(), exchange(&page.qa)).offline(Lang::En);
        // The pages a session was created with are missing from upstream's backup, which is
        // where the summary shown is read from.
        let want = if page.backed_up { made.as_str() } else { "" };
        assert_eq!(shown, want, "page {n}");
        if let Some(id) = &page.pre_page {
            chained += 1;
            differing += usize::from(pages.get(&number(id)).is_some_and(|(_, p)| p != shown));
        }
        expected.insert(*n, made);
    }
    assert!(
        chained > 5 && differing > 5,
        "{chained} chained, {differing} differ"
    );

    // The pip package: every page of the open chain shows its newest summary.
    let latest = offline_memory_showing(engine, "pip", ThreadSummaries::Latest);
    memorize(&latest, &conversation(60)).await;
    let pages = pages_shown(&latest);
    let same = pages
        .values()
        .filter_map(|(page, shown)| {
            let previous = pages.get(&number(page.pre_page.as_deref()?))?;
            Some(&previous.1 == shown)
        })
        .filter(|same| *same)
        .count();
    assert!(
        same > 5,
        "{same} chained pages show their successor's summary"
    );
}

#[tokio::test]
async fn a_copy_taken_before_exit_keeps_only_what_upstream_keeps_in_chroma() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let memory = offline_memory(engine.clone(), "built");
    memorize(&memory, &conversation(80)).await;
    let before = memory.tiers.lock().clone();
    assert!(!before.sessions.is_empty() && !before.short_term.is_empty());
    assert!(before.long_term.profile.is_some() && !before.long_term.user_knowledge.is_empty());
    memory.lose_state_unsaved_before_exit().unwrap();
    let after = memory.tiers.lock().clone();
    assert!(after.sessions.is_empty() && after.short_term.is_empty() && after.last_page.is_none());
    assert_eq!(after.long_term.profile, None);
    assert_eq!(
        after.long_term.user_knowledge,
        before.long_term.user_knowledge
    );
    assert_eq!(
        after.long_term.assistant_knowledge,
        before.long_term.assistant_knowledge
    );
    // Written through: the memory reopened holds the same.
    drop(memory);
    let reopened = offline_memory(engine.clone(), "built");
    assert_eq!(*reopened.tiers.lock(), after);

    // With metadata_at_exit = false nothing is lost.
    let stack = LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).unwrap();
    let whole = MemoryOs::new(MemoryContext {
        engine,
        namespace: "whole".into(),
        llm: Arc::new(stack),
        embedder: Some(Arc::new(HashingEmbedder::new(64))),
        lang: Lang::En,
        settings: SystemSettings::default()
            .with_own(
                &MemoryOsSettings::default()
                    .keeping_one_sided(true)
                    .metadata_at_exit(false),
            )
            .unwrap(),
        date: "2023-05-08".into(),
    })
    .unwrap();
    memorize(&whole, &conversation(80)).await;
    let kept = whole.tiers.lock().clone();
    whole.lose_state_unsaved_before_exit().unwrap();
    assert_eq!(*whole.tiers.lock(), kept);
}

#[tokio::test]
async fn the_pages_a_session_is_created_with_are_lost_as_upstream_loses_them() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let memory = offline_memory(engine.clone(), "upstream");
    memorize(&memory, &conversation(80)).await;
    {
        let tiers = memory.tiers.lock();
        let pages: Vec<&Page> = tiers
            .sessions
            .iter()
            .flat_map(|s| s.pages.iter().map(|p| &**p))
            .collect();
        let lost: Vec<&&Page> = pages.iter().filter(|p| !p.backed_up).collect();
        // One creation batch per session, never analyzed and showing no thread summary.
        assert!(!lost.is_empty() && lost.len() < pages.len());
        for page in &lost {
            assert!(!page.analyzed, "{}", page.id);
            assert_eq!(tiers.meta_of(page), "", "{}", page.id);
        }
        assert!(pages.iter().any(|p| p.backed_up && p.analyzed));
    }

    let stack = LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).unwrap();
    let settings = SystemSettings::default()
        .with_own(&MemoryOsSettings {
            keep_creation_pages: true,
            ..MemoryOsSettings::default().keeping_one_sided(true)
        })
        .unwrap();
    let kept = MemoryOs::new(MemoryContext {
        engine,
        namespace: "kept".into(),
        llm: Arc::new(stack),
        embedder: Some(Arc::new(HashingEmbedder::new(64))),
        lang: Lang::En,
        settings,
        date: "2023-05-08".into(),
    })
    .unwrap();
    memorize(&kept, &conversation(80)).await;
    let tiers = kept.tiers.lock();
    assert!(tiers
        .sessions
        .iter()
        .flat_map(|s| s.pages.iter())
        .all(|p| p.backed_up));
}
