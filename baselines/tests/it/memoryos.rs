//! MemoryOS offline: the short-term queue spills into pages and sessions, the LLM operations
//! are counted, one-sided corpus turns are dropped (parity) or kept (option), corpus turns keep
//! upstream's line form, `retrieve_k` sets the pages kept, and every tier survives reopening.

use mb_baselines::{registry, TrainingDialog};
use mb_core::Lang;
use mb_datasets::corpus::turn_line;
use mb_datasets::dataset::CorpusFormat;

use mb_llm::{Message, Role};

use crate::common::{context, engine, offline, sample};

fn message(role: Role, content: String) -> Message {
    Message { role, content }
}

/// A dialog of `n` exchanges about the user's garden.
fn dialog(n: usize) -> Vec<Message> {
    (0..n)
        .flat_map(|i| {
            [
                message(
                    Role::User,
                    format!("My garden has {i} tomato plants and I water them daily."),
                ),
                message(
                    Role::Assistant,
                    format!("Watering {i} tomato plants daily keeps the garden healthy."),
                ),
            ]
        })
        .collect()
}

#[tokio::test]
async fn exchanges_spill_into_pages_and_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let spec = registry::get("memoryos").unwrap();
    let messages = dialog(9);
    let stats = {
        let memory = spec
            .build(context(engine.clone(), "os", offline()))
            .unwrap();
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
        memory.stats().unwrap()
    };
    // Nine exchanges: six wait in the short-term queue, three became pages (filed once per
    // topic of their eviction batch), and each eviction ran the chain and summary operations.
    assert!(stats.items >= 6 + 3, "{stats:?}");
    assert!(stats.llm_operations >= 3 * 3, "{stats:?}");

    let memory = spec.build(context(engine, "os", offline())).unwrap();
    assert_eq!(memory.stats().unwrap(), stats);
    let answered = memory
        .answer(
            &[Message::user("How many tomato plants are in my garden?")],
            Lang::En,
            7,
        )
        .await
        .unwrap();
    let prompt = &answered.messages[0].content;
    for part in [
        "<CONTEXT>",
        "<MEMORY>",
        "<USER TRAITS>",
        "【Historical Memory】",
        "The user just said: How many tomato plants",
    ] {
        assert!(prompt.contains(part), "{part} missing from {prompt}");
    }
    assert!(
        prompt.contains("User: My garden has 8 tomato plants"),
        "the short-term queue is in the context"
    );
    assert!(
        !answered.retrieved.is_empty(),
        "pages about the garden are retrieved"
    );
    // The question's keyword call is the answer's, not the memory's building.
    assert_eq!(memory.stats().unwrap().llm_operations, stats.llm_operations);
}

#[tokio::test]
async fn one_sided_corpus_turns_are_dropped_unless_kept() {
    let (conversation, _) = sample();
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let spec = registry::get("memoryos").unwrap();

    let parity = spec
        .build(context(engine.clone(), "parity", offline()))
        .unwrap();
    let corpus = parity
        .memorize_corpus(&conversation, CorpusFormat::Locomo)
        .await
        .unwrap();
    assert_eq!(corpus.units.len(), conversation.turn_count());
    // Only the short-term queue is left: six turns.
    assert_eq!(parity.stats().unwrap().items, 6);

    let mut keep = context(engine, "keep", offline());
    keep.settings = keep_one_sided(keep.settings);
    let kept = spec.build(keep).unwrap();
    let corpus = kept
        .memorize_corpus(&conversation, CorpusFormat::Locomo)
        .await
        .unwrap();
    let stats = kept.stats().unwrap();
    assert!(stats.items > 6 + 60, "{stats:?}");
    let hits = kept
        .retrieve(
            "Speaker Nadiasays : Meet Biscuit, the greyhound the rescue brought over.",
            Lang::En,
            7,
        )
        .await
        .unwrap();
    assert!(hits.iter().any(|h| !h.turns.is_empty()), "{hits:?}");
    kept.delete_corpus(&corpus).unwrap();
    // Its pages and queued turns are gone; knowledge already derived from them stays.
    let after = kept.stats().unwrap();
    assert_eq!(after.text_bytes, 0, "{after:?}");
    assert!(after.items < stats.items, "{after:?}");
}

#[tokio::test]
async fn corpus_turns_keep_upstreams_line_form() {
    let (conversation, _) = sample();
    let dir = tempfile::tempdir().unwrap();
    let spec = registry::get("memoryos").unwrap();
    let memory = spec
        .build(context(engine(dir.path()), "os", offline()))
        .unwrap();
    memory
        .memorize_corpus(&conversation, CorpusFormat::Locomo)
        .await
        .unwrap();
    let answered = memory
        .answer(&[Message::user("What did they talk about?")], Lang::En, 7)
        .await
        .unwrap();
    // The short-term queue holds the last turns, as `Speaker <name>says : <text>`.
    let last = conversation.sessions.last().unwrap().turns.last().unwrap();
    let line = turn_line(last);
    assert!(line.starts_with(&format!("Speaker {}says : ", last.speaker)));
    assert!(
        answered.messages[0].content.contains(&line),
        "{line} missing from {}",
        answered.messages[0].content
    );
}

#[tokio::test]
async fn retrieve_k_sets_the_pages_a_question_keeps() {
    let (conversation, _) = sample();
    let dir = tempfile::tempdir().unwrap();
    let mut keep = context(engine(dir.path()), "keep", offline());
    keep.settings = keep_one_sided(keep.settings);
    let memory = registry::get("memoryos").unwrap().build(keep).unwrap();
    memory
        .memorize_corpus(&conversation, CorpusFormat::Locomo)
        .await
        .unwrap();
    let pages = |hits: &[mb_baselines::Retrieved]| {
        hits.iter()
            .filter(|h| h.doc_id.starts_with("page_"))
            .count()
    };
    let question = "Speaker Nadiasays : Meet Biscuit, the greyhound the rescue brought over.";
    let seven = memory.retrieve(question, Lang::En, 7).await.unwrap();
    assert!(pages(&seven) > 3, "{seven:?}");
    let two = memory.retrieve(question, Lang::En, 2).await.unwrap();
    assert_eq!(pages(&two), 2, "{two:?}");
    let answered = memory
        .answer(&[Message::user(question)], Lang::En, 3)
        .await
        .unwrap();
    assert_eq!(pages(&answered.retrieved), 3);
}

/// `settings` filing one-sided exchanges.
fn keep_one_sided(settings: mb_baselines::SystemSettings) -> mb_baselines::SystemSettings {
    let keep = mb_baselines::memoryos::MemoryOsSettings::default().keeping_one_sided(true);
    settings.with_own(&keep).unwrap()
}
