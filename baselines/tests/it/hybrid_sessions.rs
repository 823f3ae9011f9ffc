//! The hybrid memory's session prior (issue 37): a turn that matches as well as another ranks
//! first when its session matches the question as a whole; deleting a corpus deletes its
//! sessions; editing or deleting a unit from outside rewrites or removes its session's record.

use mb_baselines::hybrid::{HybridSettings, UnitSize};
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;

use crate::common::{context, engine, offline, system};
use crate::hybrid::{conversation, session, with_hybrid};

/// The first turn of the best unit for `question` with each of `weights` set by `set`.
async fn firsts(
    corpus: &Conversation,
    question: &str,
    weights: &[f32],
    set: impl Fn(&mut HybridSettings, f32),
) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    for (i, weight) in weights.iter().enumerate() {
        let namespace = format!("n{i}");
        let base = context(engine(&dir.path().join(&namespace)), &namespace, offline());
        let memory = system(
            "hybrid",
            with_hybrid(base, |h| {
                // BM25 alone: the hashing embedder's similarities would decide ties otherwise.
                h.dense_weight = 0.0;
                h.key_facts = false;
                set(h, *weight);
            }),
        );
        memory
            .memorize_corpus(corpus, CorpusFormat::Locomo)
            .await
            .unwrap();
        let retrieved = memory.retrieve(question, Lang::En, 3).await.unwrap();
        out.push(retrieved[0].turns[0].clone());
    }
    out
}

#[tokio::test]
async fn a_turn_in_a_matching_session_ranks_first() {
    let corpus = conversation(vec![
        session(
            "1:00 pm on 1 May, 2023",
            1,
            &[("Maya", "Class day is busy."), ("Jon", "I see.")],
        ),
        session(
            "1:00 pm on 8 May, 2023",
            2,
            &[
                ("Maya", "I joined a pottery course."),
                ("Jon", "Pottery sounds fun!"),
                ("Maya", "Class day was Saturday."),
            ],
        ),
    ]);
    let question = "Which day was the pottery class?";
    let found = firsts(&corpus, question, &[0.0, 1.0], |h, w| {
        h.unit = UnitSize::Turn;
        h.session_weight = w;
    })
    .await;
    // The two "class day" turns tie alone (the older first); the pottery session lifts its own.
    assert_eq!(found, ["D1:1", "D2:3"]);
}

#[tokio::test]
async fn deleting_a_corpus_deletes_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let memory = system(
        "hybrid",
        with_hybrid(context(engine.clone(), "s", offline()), |h| {
            h.session_weight = 1.0;
        }),
    );
    let corpus = conversation(vec![
        session("1 May, 2023", 1, &[("Maya", "Hi."), ("Jon", "Hello.")]),
        session("2 May, 2023", 2, &[("Maya", "Bye.")]),
    ]);
    let written = memory
        .memorize_corpus(&corpus, CorpusFormat::Locomo)
        .await
        .unwrap();
    assert_eq!(engine.count("s/hybrid-sessions").unwrap(), 2);
    memory.delete_corpus(&written).unwrap();
    assert_eq!(engine.count("s/hybrid-sessions").unwrap(), 0);
    assert_eq!(memory.stats().unwrap().items, 0);
}

/// Every session record's text, by session.
fn session_texts(engine: &mb_engine::Engine) -> Vec<(String, String)> {
    engine
        .records("s/hybrid-sessions")
        .unwrap()
        .map(Result::unwrap)
        .map(|r| (r.attribute("session").unwrap().to_string(), r.text))
        .collect()
}

#[tokio::test]
async fn an_edited_unit_rewrites_its_session_and_the_last_deleted_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let memory = system(
        "hybrid",
        with_hybrid(context(engine.clone(), "s", offline()), |h| {
            h.unit = UnitSize::Turn;
            h.session_weight = 1.0;
            h.key_facts = false;
        }),
    );
    let corpus = conversation(vec![
        session(
            "1 May, 2023",
            1,
            &[("Maya", "My locker code is 7291."), ("Jon", "Noted.")],
        ),
        session("2 May, 2023", 2, &[("Maya", "Bye.")]),
    ]);
    memory
        .memorize_corpus(&corpus, CorpusFormat::Locomo)
        .await
        .unwrap();
    let before = session_texts(&engine);
    assert!(before[0].1.contains("7291"), "{before:?}");
    let units: Vec<mb_engine::Record> = engine.records("s").unwrap().map(Result::unwrap).collect();
    let secret = units.iter().find(|r| r.text.contains("7291")).unwrap();

    // Edited from outside: the session record holds the new text, not the old.
    let (space, vector) = engine.get_vectors("s", secret.id).unwrap().remove(0);
    let mut edited = mb_engine::NewRecord::new("My locker code changed.");
    edited.attributes = secret.attributes.clone();
    let reversed: Vec<f32> = vector.iter().rev().copied().collect();
    engine
        .update("s", secret.id, edited.with_vector(space, reversed))
        .unwrap();
    memory.record_edited(secret).unwrap();
    let after = session_texts(&engine);
    assert_eq!(after.len(), 2, "{after:?}");
    let first = after.iter().find(|(s, _)| s == &before[0].0).unwrap();
    assert!(
        !first.1.contains("7291") && first.1.contains("changed"),
        "{after:?}"
    );
    assert!(first.1.contains("Noted."), "{after:?}");
    assert!(
        after.contains(&before[1]),
        "another session changed: {after:?}"
    );

    // Deleted from outside, every unit of the session: its record goes too.
    for unit in units
        .iter()
        .filter(|r| r.attribute("session") == Some(&before[0].0))
    {
        engine.delete("s", unit.id).unwrap();
        memory.record_edited(unit).unwrap();
    }
    assert_eq!(session_texts(&engine), vec![before[1].clone()]);
}
