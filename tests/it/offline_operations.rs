//! The offline LLM backend on real LoCoMo conversations: every operation gives sensible,
//! deterministic results without a model. (Skipped when `../shared/data` is absent.)

use crate::common::{ingest, locomo, questions, turns};
use memorybench::baselines::amem::ops::{AnalyzeNote, EvolveNote, NoteView, QueryKeywords};
use memorybench::baselines::mem0::ops::{
    DecideMemoryUpdates, ExtractFacts, MemoryEventKind, StoredMemory,
};
use memorybench::baselines::memoryos::ops::{
    Exchange, ExtractKnowledge, IsContinuous, MetaSummary, MultiTopicSummary, UpdateProfile,
};
use memorybench::core::Lang;
use memorybench::engine::{Engine, EngineOptions};
use memorybench::llm::ops::{
    Answer, Backend, ImplicitAction, Operation, SimulateFeedback, UserPersona,
};
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
    // Upstream's fact prompt takes facts from both sides of the conversation.
    let side_text = |role: memorybench::llm::Role| {
        dialog
            .iter()
            .filter(|m| m.role == role)
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let user_text = side_text(memorybench::llm::Role::User);
    let assistant_text = side_text(memorybench::llm::Role::Assistant);
    let facts = backend
        .run(&ExtractFacts::new(dialog.clone(), "2023-05-08"), Lang::En)
        .await
        .unwrap();
    eprintln!("{} offline facts, e.g. {:?}", facts.len(), facts.first());
    for fact in &facts {
        assert!(
            user_text.contains(fact.as_str()) || assistant_text.contains(fact.as_str()),
            "{fact:?} is not from the dialog"
        );
        assert!(!fact.ends_with('?'));
    }
    assert!(facts.iter().any(|f| user_text.contains(f.as_str())));
    assert!(facts.iter().any(|f| assistant_text.contains(f.as_str())));

    let mut with_keywords = 0;
    let qs = questions(&samples[0]);
    for (question, _) in &qs {
        let keywords = backend
            .run(&QueryKeywords::new(question, 5), Lang::En)
            .await
            .unwrap();
        let keywords: Vec<&str> = keywords.split(", ").filter(|k| !k.is_empty()).collect();
        assert!(keywords.len() <= 5);
        with_keywords += usize::from(!keywords.is_empty());
        for keyword in keywords {
            assert!(
                question.to_lowercase().contains(keyword),
                "{keyword} ∉ {question}"
            );
        }
    }
    assert!(with_keywords as f64 / qs.len() as f64 > 0.95);
}

/// Session `n` of the first conversation as exchanges: speaker A plays the user, B answers.
fn exchanges(sample: &serde_json::Value, n: usize) -> Vec<Exchange> {
    let conversation = &sample["conversation"];
    let speaker = conversation["speaker_a"].as_str().unwrap();
    let turns = conversation[format!("session_{n}")].as_array().unwrap();
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for turn in turns {
        let text = turn["text"].as_str().unwrap().to_string();
        if turn["speaker"] == speaker {
            if let Some(user) = pending.replace(text) {
                out.push(Exchange {
                    user,
                    assistant: String::new(),
                });
            }
        } else {
            out.push(Exchange {
                user: pending.take().unwrap_or_default(),
                assistant: text,
            });
        }
    }
    out
}

/// Facts as stored memories with ids "0", "1", …
fn as_stored(facts: &[String]) -> Vec<StoredMemory> {
    facts
        .iter()
        .enumerate()
        .map(|(i, f)| StoredMemory {
            id: i.to_string(),
            text: f.clone(),
        })
        .collect()
}

#[tokio::test]
async fn memory_system_operations_on_real_sessions() {
    let Some(samples) = locomo() else { return };
    let backend = Backend::offline();
    let en = Lang::En;
    let session = exchanges(&samples[0], 1);
    assert!(session.len() > 5);

    // MemoryOS: some consecutive exchanges continue a thread, others do not.
    let mut continuous = 0;
    for pair in session.windows(2) {
        let op = IsContinuous::new(pair[0].clone(), pair[1].clone());
        continuous += usize::from(backend.run(&op, en).await.unwrap());
    }
    eprintln!(
        "{continuous} of {} exchanges continue the previous one",
        session.len() - 1
    );
    assert!(continuous > 0 && continuous < session.len() - 1);

    let mut summary = None;
    for exchange in &session[..4] {
        let next = backend
            .run(&MetaSummary::new(summary.clone(), exchange.clone()), en)
            .await
            .unwrap();
        assert!(!next.is_empty());
        summary = Some(next);
    }
    let transcript: Vec<String> = session.iter().map(Exchange::render).collect();
    let topics = backend
        .run(&MultiTopicSummary::new(transcript.join("\n")), en)
        .await
        .unwrap();
    assert_eq!(topics.len(), 1);
    assert!(transcript
        .join("\n")
        .to_lowercase()
        .contains(&topics[0].theme));
    let profile = backend
        .run(&UpdateProfile::new(None, session.clone()), en)
        .await
        .unwrap();
    let knowledge = backend
        .run(&ExtractKnowledge::new(session.clone()), en)
        .await
        .unwrap();
    assert!(!profile.is_empty());
    assert_eq!(knowledge.user_private.as_deref(), Some(profile.as_str()));
    assert!(knowledge.assistant.is_some());

    // A-Mem: notes get attributes from their own text; similar neighbours get linked.
    let notes: Vec<NoteView> = session
        .iter()
        .map(|e| {
            let attributes = AnalyzeNote::new(&e.user).offline(en);
            NoteView {
                content: e.user.clone(),
                context: attributes.context,
                keywords: attributes.keywords,
                tags: attributes.tags,
                timestamp: "1:56 pm on 8 May, 2023".to_string(),
            }
        })
        .collect();
    for note in &notes {
        for keyword in &note.keywords {
            assert!(note.content.to_lowercase().contains(keyword.as_str()));
        }
    }
    let evolution = backend
        .run(&EvolveNote::new(notes[1].clone(), notes.clone()), en)
        .await
        .unwrap();
    let linked = evolution
        .strengthen
        .expect("a note is similar to itself")
        .connections;
    assert!(linked.contains(&1));

    // Mem0: facts of session 1 are stored; session 2's facts add to or update them.
    let first: Vec<Message> = session.iter().map(|e| Message::user(&e.user)).collect();
    let facts = backend
        .run(&ExtractFacts::new(first, "2023-05-08"), en)
        .await
        .unwrap();
    let stored = as_stored(&facts);
    let second: Vec<Message> = exchanges(&samples[0], 2)
        .iter()
        .map(|e| Message::user(&e.user))
        .collect();
    let new_facts = backend
        .run(&ExtractFacts::new(second, "2023-05-25"), en)
        .await
        .unwrap();
    let events = backend
        .run(
            &DecideMemoryUpdates::new(stored.clone(), new_facts.clone()),
            en,
        )
        .await
        .unwrap();
    assert!(!events.is_empty());
    assert!(events.iter().all(|e| e.event != MemoryEventKind::Delete));
    for event in events.iter().filter(|e| e.event == MemoryEventKind::Update) {
        assert!(stored.iter().any(|m| m.id == event.id));
    }
    // Re-deciding the same facts against themselves changes nothing.
    let same = as_stored(&new_facts);
    let idempotent = backend
        .run(&DecideMemoryUpdates::new(same, new_facts), en)
        .await
        .unwrap();
    assert!(idempotent.is_empty());
}

#[tokio::test]
async fn rule_based_feedback_on_locomo_answers() {
    let Some(samples) = locomo() else { return };
    let backend = Backend::offline();
    let persona = UserPersona {
        persona: "someone asking about their past conversations".to_string(),
        expertise: "You remember what was said.".to_string(),
        criteria: vec!["states the fact that was asked for".to_string()],
    };
    let mut judged = 0;
    for qa in samples[0]["qa"].as_array().unwrap().iter().take(40) {
        let Some(answer) = qa["answer"]
            .as_str()
            .map(str::to_string)
            .or_else(|| qa["answer"].as_i64().map(|n| n.to_string()))
        else {
            continue;
        };
        let question = qa["question"].as_str().unwrap();
        let conversation = |reply: &str| vec![Message::user(question), Message::assistant(reply)];
        let right = SimulateFeedback::new(persona.clone(), question, conversation(&answer))
            .with_reference(&answer, format!("Reference answer: {answer}"));
        let feedback = backend.run(&right, Lang::En).await.unwrap();
        assert_eq!(feedback.implicit_action, ImplicitAction::Like, "{question}");
        assert!(feedback.should_end());
        let wrong =
            SimulateFeedback::new(persona.clone(), question, conversation("No idea, sorry."))
                .with_reference(&answer, format!("Reference answer: {answer}"));
        let feedback = backend.run(&wrong, Lang::En).await.unwrap();
        assert_eq!(
            feedback.implicit_action,
            ImplicitAction::Dislike,
            "{question}"
        );
        assert!(!feedback.should_end());
        judged += 1;
    }
    assert!(judged >= 30);
}
