//! The offline LLM backend on real LoCoMo conversations: every operation gives sensible,
//! deterministic results without a model. (Skipped when `../shared/data` is absent.)

mod common;

use common::{ingest, locomo, questions, turns};
use memorybench::engine::{Engine, EngineOptions};
use memorybench::llm::ops::{Answer, Backend, ExtractFacts, Lang, QueryKeywords};
use memorybench::llm::Message;

#[tokio::test]
async fn extractive_answers_come_from_evidence_turns() {
    let Some(samples) = locomo() else { return };
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    let backend = Backend::offline();
    let (mut from_evidence, mut answered, mut total) = (0usize, 0usize, 0usize);
    for (i, sample) in samples.iter().enumerate() {
        let ns = format!("locomo-{i}");
        ingest(&engine, &ns, sample);
        let by_id: std::collections::HashMap<String, String> = turns(sample).into_iter().collect();
        for (question, evidence) in questions(sample) {
            let retrieved: Vec<String> = engine
                .search_text(&ns, &question, 5)
                .unwrap()
                .into_iter()
                .map(|h| h.record.text)
                .collect();
            let op = Answer::new(vec![Message::user(&question)])
                .with_evidence(&question, retrieved.clone());
            let answer = backend.run(&op, Lang::En).await.unwrap();
            assert_eq!(
                answer,
                backend.run(&op, Lang::En).await.unwrap(),
                "deterministic"
            );
            total += 1;
            if answer != "I don't know." {
                answered += 1;
                assert!(
                    retrieved.iter().any(|r| r.contains(&answer)),
                    "{answer:?} is not from the retrieved memories"
                );
            }
            if evidence
                .iter()
                .filter_map(|e| by_id.get(e))
                .any(|text| text.contains(&answer))
            {
                from_evidence += 1;
            }
        }
    }
    let rate = from_evidence as f64 / total as f64;
    eprintln!(
        "offline answers: {answered}/{total} answered, {rate:.3} taken from an evidence turn"
    );
    assert!(answered as f64 / total as f64 > 0.9);
    assert!(
        rate > 0.25,
        "only {rate:.3} of offline answers quote evidence"
    );
}

#[tokio::test]
async fn facts_and_keywords_from_a_real_session() {
    let Some(samples) = locomo() else { return };
    let backend = Backend::offline();
    let conversation = &samples[0]["conversation"];
    let speaker = conversation["speaker_a"].as_str().unwrap();
    let dialog: Vec<Message> = conversation["session_1"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let text = t["text"].as_str().unwrap();
            if t["speaker"] == speaker {
                Message::user(text)
            } else {
                Message::assistant(text)
            }
        })
        .collect();
    let user_text: String = dialog
        .iter()
        .filter(|m| m.role == memorybench::llm::Role::User)
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let facts = backend
        .run(&ExtractFacts::new(dialog.clone(), "2023-05-08"), Lang::En)
        .await
        .unwrap();
    eprintln!("{} offline facts, e.g. {:?}", facts.len(), facts.first());
    assert!(!facts.is_empty());
    for fact in &facts {
        assert!(
            user_text.contains(fact.as_str()),
            "{fact:?} is not the user's"
        );
        assert!(!fact.ends_with('?'));
    }

    let mut with_keywords = 0;
    let qs = questions(&samples[0]);
    for (question, _) in &qs {
        let keywords = backend
            .run(&QueryKeywords::new(question, 5), Lang::En)
            .await
            .unwrap();
        assert!(keywords.len() <= 5);
        with_keywords += usize::from(!keywords.is_empty());
        for keyword in &keywords {
            assert!(
                question.to_lowercase().contains(keyword.as_str()),
                "{keyword} ∉ {question}"
            );
        }
    }
    assert!(with_keywords as f64 / qs.len() as f64 > 0.95);
}
