//! The hybrid memory: it finds more evidence than BM25-M on the sample, favours rounds dated
//! when a question says, returns a repeated text once, indexes the extracted facts and counts
//! the operations that extracted them, and memorizes training dialogs as rounds.

use std::collections::HashSet;

use mb_baselines::hybrid::{HybridFile, HybridSettings, UnitSize};
use mb_baselines::{MemoryContext, TrainingDialog};
use mb_core::Lang;
use mb_datasets::corpus::{Conversation, Session, Turn};
use mb_datasets::dataset::CorpusFormat;
use mb_eval::metrics::retrieval::turn_recall_at_k;
use mb_llm::{Message, Role};

use crate::common::{context, engine, offline, plain, sample, system};

pub(crate) fn with_hybrid(
    context: MemoryContext,
    change: impl FnOnce(&mut HybridSettings),
) -> MemoryContext {
    let mut own = context.settings.own::<HybridFile>().unwrap();
    change(&mut own.hybrid);
    MemoryContext {
        settings: context.settings.clone().with_own(&own).unwrap(),
        ..context
    }
}

pub(crate) fn session(date: &str, number: usize, lines: &[(&str, &str)]) -> Session {
    Session {
        date_time: date.to_string(),
        turns: lines
            .iter()
            .enumerate()
            .map(|(i, (speaker, text))| Turn {
                speaker: speaker.to_string(),
                dia_id: format!("D{number}:{}", i + 1),
                text: text.to_string(),
            })
            .collect(),
    }
}

pub(crate) fn conversation(sessions: Vec<Session>) -> Conversation {
    Conversation {
        speaker_a: Some("Maya".into()),
        speaker_b: Some("Jon".into()),
        sessions,
    }
}

/// Mean turn-level recall at 5 of `name` over the sample's questions.
async fn sample_turn_recall(name: &str, context: MemoryContext) -> f64 {
    let (conversation, qa) = sample();
    let memory = system(name, context);
    memory
        .memorize_corpus(&conversation, CorpusFormat::Locomo)
        .await
        .unwrap();
    let mut total = 0.0;
    let mut n = 0;
    for (question, evidence, category) in &qa {
        if *category == 5 {
            continue;
        }
        let relevant: HashSet<&str> = evidence.iter().map(String::as_str).collect();
        let retrieved = memory.retrieve(question, Lang::En, 10).await.unwrap();
        let turns: Vec<Vec<&str>> = retrieved
            .iter()
            .map(|r| r.turns.iter().map(String::as_str).collect())
            .collect();
        let units: Vec<&[&str]> = turns.iter().map(Vec::as_slice).collect();
        if let Some(recall) = turn_recall_at_k(&units, &relevant, 5) {
            total += recall;
            n += 1;
        }
    }
    assert!(n > 0);
    total / n as f64
}

#[tokio::test]
async fn finds_more_sample_evidence_than_bm25_m() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let llm = offline();
    let hybrid = sample_turn_recall("hybrid", context(engine.clone(), "h", llm.clone())).await;
    let bm25 = sample_turn_recall("bm25_message", plain(context(engine, "b", llm))).await;
    assert!(
        hybrid > bm25,
        "hybrid T@5 {hybrid:.3} should beat BM25-M's {bm25:.3}"
    );
}

#[tokio::test]
async fn a_question_about_last_week_favours_the_round_dated_then() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        ("Maya", "I went hiking with my sister."),
        ("Jon", "Sounds lovely."),
    ];
    let corpus = conversation(vec![
        session("1:00 pm on 1 April, 2023", 1, &lines),
        session("1:00 pm on 11 May, 2023", 2, &lines),
    ]);
    let question = "Who did Maya go hiking with last week?";
    let mut firsts = Vec::new();
    for (namespace, weight) in [("timed", 1.0), ("untimed", 0.0)] {
        let base = context(engine(&dir.path().join(namespace)), namespace, offline());
        // Asked on 20 May 2023: last week is 6–14 May.
        let base = MemoryContext {
            date: "2023-05-20".into(),
            ..base
        };
        let memory = system(
            "hybrid",
            with_hybrid(base, |h| {
                h.time_weight = weight;
                h.dedupe = false;
            }),
        );
        memory
            .memorize_corpus(&corpus, CorpusFormat::Locomo)
            .await
            .unwrap();
        let retrieved = memory.retrieve(question, Lang::En, 2).await.unwrap();
        firsts.push(retrieved[0].turns[0].clone());
        assert!(retrieved[0].text.starts_with('['), "{}", retrieved[0].text);
    }
    // With the time bonus the May round leads; without it the tie goes to the older record.
    assert_eq!(firsts, ["D2:1", "D1:1"]);
}

#[tokio::test]
async fn a_repeated_text_comes_back_once() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = conversation(vec![
        session("1 May, 2023", 1, &[("Maya", "Thanks a lot for the cake!")]),
        session("2 May, 2023", 2, &[("Maya", "Thanks a lot for the cake!")]),
        session(
            "3 May, 2023",
            3,
            &[("Maya", "The cake recipe is from my aunt.")],
        ),
    ]);
    let mut counts = Vec::new();
    for dedupe in [true, false] {
        let namespace = format!("d{dedupe}");
        let base = context(engine(&dir.path().join(&namespace)), &namespace, offline());
        let memory = system(
            "hybrid",
            with_hybrid(base, |h| {
                h.unit = UnitSize::Turn;
                h.dedupe = dedupe;
            }),
        );
        memory
            .memorize_corpus(&corpus, CorpusFormat::Locomo)
            .await
            .unwrap();
        let retrieved = memory
            .retrieve("thanks for the cake", Lang::En, 3)
            .await
            .unwrap();
        counts.push(
            retrieved
                .iter()
                .filter(|r| r.text.ends_with("Thanks a lot for the cake!"))
                .count(),
        );
    }
    assert_eq!(counts, [1, 2]);
}

#[tokio::test]
async fn extracted_facts_are_indexed_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let corpus = conversation(vec![session(
        "8 May, 2023",
        1,
        &[
            ("Maya", "I adopted a border collie."),
            ("Jon", "Nice! What is her name?"),
            ("Maya", "Pixel."),
        ],
    )]);
    let memory = system("hybrid", context(engine.clone(), "facts", offline()));
    let written = memory
        .memorize_corpus(&corpus, CorpusFormat::Locomo)
        .await
        .unwrap();
    // Overlapping rounds: every turn with the reply to it, the last turn alone.
    let turns: Vec<Vec<String>> = written.units.iter().map(|u| u.turns.clone()).collect();
    assert_eq!(
        turns,
        [vec!["D1:1", "D1:2"], vec!["D1:2", "D1:3"], vec!["D1:3"]]
    );
    let keys: Vec<String> = engine
        .records("facts")
        .unwrap()
        .map(|r| r.unwrap().text)
        .collect();
    assert!(
        keys[0].contains("Maya adopted a border collie."),
        "{keys:?}"
    );
    assert!(keys[0].starts_with("8 May 2023\n"), "{keys:?}");
    assert_eq!(memory.stats().unwrap().llm_operations, 3);
    assert_eq!(memory.stats().unwrap().items, 3);
    memory.delete_corpus(&written).unwrap();
    assert_eq!(memory.stats().unwrap().items, 0);
}

#[tokio::test]
async fn training_dialogs_become_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let memory = system("hybrid", context(engine(dir.path()), "dialogs", offline()));
    let message = |role, content: &str| Message {
        role,
        content: content.into(),
    };
    let messages = vec![
        message(Role::System, "Be brief."),
        message(Role::User, "Recommend a novel about whales."),
        message(Role::Assistant, "Moby-Dick by Herman Melville."),
    ];
    let dialog = TrainingDialog {
        test_idx: 7,
        dataset: "Sample-Stories",
        lang: Lang::En,
        messages: &messages,
        metadata: None,
    };
    memory.memorize_dialog(dialog).await.unwrap();
    let retrieved = memory.retrieve("whale novel", Lang::En, 5).await.unwrap();
    assert_eq!(retrieved[0].doc_id, "conv_7_1");
    assert_eq!(
        retrieved[0].text,
        "user: Recommend a novel about whales.\nassistant: Moby-Dick by Herman Melville."
    );
}
