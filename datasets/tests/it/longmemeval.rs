//! LongMemEval: the streaming reader on a fixture in the released format (written here), errors
//! naming instance, question_id and field, the official corpus ids and relabelling, every
//! retrieval metric by hand. The reading prompts and the judge are tested in mb-eval.

use std::path::{Path, PathBuf};

use mb_datasets::longmemeval::retrieval::{
    evaluate, evaluate_as_sessions, session_of, turn_id, History,
};
use mb_datasets::longmemeval::{
    for_each_instance, for_each_instance_in, variant, Instance, LongMemEvalError, QuestionType,
};
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/longmemeval_tiny.json")
}

fn read_all(path: &Path) -> Vec<Instance> {
    let mut out = Vec::new();
    for_each_instance_in(path, |i| {
        out.push(i);
        Ok::<(), LongMemEvalError>(())
    })
    .unwrap();
    out
}

fn read_text(text: &str) -> Result<usize, LongMemEvalError> {
    for_each_instance(text.as_bytes(), |_| Ok::<(), LongMemEvalError>(()))
}

#[test]
fn reads_the_fixture_in_order() {
    let instances = read_all(&fixture());
    let ids: Vec<&str> = instances.iter().map(|i| i.question_id.as_str()).collect();
    assert_eq!(ids, ["lme_q1", "lme_q2_abs", "lme_q3", "lme_q4"]);
    assert_eq!(instances[2].answer, "14", "numeric answers become text");
    assert_eq!(instances[2].question_type, QuestionType::TemporalReasoning);
    assert_eq!(instances[0].question_day.iso(), "2023-05-30");
    assert!(instances[1].is_abstention() && !instances[0].is_abstention());
    assert!(instances
        .iter()
        .all(|i| i.unknown_answer_sessions().is_empty()));
    assert_eq!(instances[0].sessions[1].turns[2].has_answer, Some(true));
    assert_eq!(instances[0].sessions[0].turns[0].has_answer, None);
    assert_eq!(
        variant(Path::new("x/longmemeval_m_cleaned.json")),
        Some("M (cleaned)")
    );
    assert_eq!(variant(&fixture()), None);
}

#[test]
fn a_large_array_streams_instance_by_instance() {
    let one: Value =
        serde_json::from_str::<Vec<Value>>(&std::fs::read_to_string(fixture()).unwrap())
            .unwrap()
            .remove(0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("longmemeval_s.json");
    let items: Vec<Value> = (0..300)
        .map(|n| {
            let mut item = one.clone();
            item["question_id"] = Value::String(format!("q{n}"));
            item
        })
        .collect();
    std::fs::write(&path, serde_json::to_string(&items).unwrap()).unwrap();
    let mut seen = 0;
    let count = for_each_instance_in(&path, |instance| {
        assert_eq!(instance.index, seen);
        assert_eq!(instance.question_id, format!("q{seen}"));
        seen += 1;
        Ok::<(), LongMemEvalError>(())
    })
    .unwrap();
    assert_eq!((count, seen), (300, 300));
    // A callback's error stops the reading and comes back as it was.
    let mut calls = 0;
    let stopped = for_each_instance_in(&path, |_| {
        calls += 1;
        if calls == 3 {
            Err(LongMemEvalError::Json("enough".into()))
        } else {
            Ok(())
        }
    });
    assert!(matches!(stopped, Err(LongMemEvalError::Json(m)) if m == "enough"));
    assert_eq!(calls, 3);
}

#[test]
fn malformed_files_name_instance_question_and_field() {
    let good = std::fs::read_to_string(fixture()).unwrap();
    let mut items: Vec<Value> = serde_json::from_str(&good).unwrap();
    let error_of = |items: &[Value]| {
        read_text(&serde_json::to_string(items).unwrap())
            .unwrap_err()
            .to_string()
    };

    let mut bad = items.clone();
    bad[2]["question_type"] = Value::String("trivia".into());
    let e = error_of(&bad);
    assert!(
        e.contains("instance 2")
            && e.contains("lme_q3")
            && e.contains("question_type")
            && e.contains("trivia"),
        "{e}"
    );

    let mut bad = items.clone();
    bad[0]["haystack_dates"].as_array_mut().unwrap().pop();
    let e = error_of(&bad);
    assert!(
        e.contains("instance 0") && e.contains("haystack_dates") && e.contains("2 sessions"),
        "{e}"
    );

    let mut bad = items.clone();
    bad[1].as_object_mut().unwrap().remove("question");
    let e = error_of(&bad);
    assert!(
        e.contains("instance 1") && e.contains("lme_q2_abs") && e.contains("question: missing"),
        "{e}"
    );

    let mut bad = items.clone();
    bad[3]["haystack_sessions"][0][1]["role"] = Value::String("system".into());
    let e = error_of(&bad);
    assert!(e.contains("haystack_sessions[0][1].role"), "{e}");

    let mut bad = items.clone();
    bad[0]["question_date"] = Value::String("someday".into());
    assert!(error_of(&bad).contains("question_date"));

    assert!(read_text("{\"question_id\": 1}")
        .unwrap_err()
        .to_string()
        .contains("JSON array"));
    let truncated = &good[..good.len() / 2];
    assert!(read_text(truncated)
        .unwrap_err()
        .to_string()
        .contains("instance"));

    // An evidence session the haystack does not have is reported.
    items[0]["answer_session_ids"] = serde_json::json!(["answer_q1_1", "answer_gone"]);
    let mut unknown = Vec::new();
    for_each_instance(serde_json::to_string(&items).unwrap().as_bytes(), |i| {
        unknown.extend(i.unknown_answer_sessions().into_iter().map(str::to_string));
        Ok::<(), LongMemEvalError>(())
    })
    .unwrap();
    assert_eq!(unknown, ["answer_gone"]);
}

#[test]
fn corpus_ids_follow_the_official_relabelling() {
    let instances = read_all(&fixture());
    let q3 = &instances[2];
    let user = q3.conversation(History::User);
    let ids: Vec<&str> = user
        .sessions
        .iter()
        .flat_map(|s| s.turns.iter().map(|t| t.dia_id.as_str()))
        .collect();
    // User turns only, numbered over all turns; the last evidence session's user turn does not
    // hold the answer, so it is `noans`.
    assert_eq!(
        ids,
        [
            "answer_q3_1_1",
            "ultrachat_y2_1",
            "answer_q3_2_1",
            "noans_q3_3_1"
        ]
    );
    assert_eq!(user.sessions[0].date_time, "2023/04/01 (Sat) 10:00");
    let all = q3.conversation(History::All);
    assert_eq!(all.sessions[3].turns[1].dia_id, "answer_q3_3_2");
    assert_eq!(all.sessions[3].turns[1].speaker, "assistant");
    assert_eq!(turn_id("answer_a_1", 3, Some(false)), "noans_a_1_3");
    assert_eq!(session_of("answer_a_1_3"), "answer_a_1");
    // Scored: not abstentions, and some given turn holds the answer.
    let scored: Vec<bool> = instances
        .iter()
        .map(|i| i.is_scored(History::User))
        .collect();
    assert_eq!(scored, [true, false, true, false]);
    assert!(instances[3].is_scored(History::All));
}

#[test]
fn retrieval_metrics_by_hand() {
    let corpus = ["s1_1", "answer_a_1", "s2_1", "answer_b_1", "noans_c_1"];
    // Gold: answer_a_1, answer_b_1.
    let ranked = ["answer_a_1", "s1_1", "answer_b_1", "s2_1", "noans_c_1"];
    let at1 = evaluate(&ranked, &corpus, 1);
    assert_eq!((at1.recall_any, at1.recall_all), (1.0, 0.0));
    assert_eq!(at1.ndcg_any, 1.0);
    let at3 = evaluate(&ranked, &corpus, 3);
    assert_eq!((at3.recall_any, at3.recall_all), (1.0, 1.0));
    // DCG = 1 + 0 + 1/log2(3); ideal = 1 + 1 (positions 1 and 2 both weigh 1).
    let expected = (1.0 + 1.0 / 3f64.log2()) / 2.0;
    assert!((at3.ndcg_any - expected).abs() < 1e-12);
    let second = evaluate(&["s1_1", "answer_b_1"], &corpus, 2);
    assert!((second.ndcg_any - 0.5).abs() < 1e-12);

    // Turn rankings at session level: k grows until k distinct sessions are covered.
    let turns = [
        "x_1",
        "x_2",
        "answer_a_1",
        "answer_a_2",
        "y_1",
        "answer_b_4",
    ];
    let corpus_turns = [
        "x_1",
        "x_2",
        "answer_a_1",
        "answer_a_2",
        "y_1",
        "answer_b_4",
        "z_1",
    ];
    let s1 = evaluate_as_sessions(&turns, &corpus_turns, 1);
    assert_eq!((s1.recall_any, s1.recall_all), (0.0, 0.0));
    let s2 = evaluate_as_sessions(&turns, &corpus_turns, 2);
    // x, x, answer_a: two sessions after 3 turns.
    assert_eq!((s2.recall_any, s2.recall_all), (1.0, 0.0));
    let s3 = evaluate_as_sessions(&turns, &corpus_turns, 3);
    assert_eq!((s3.recall_any, s3.recall_all), (1.0, 0.0));
    let s4 = evaluate_as_sessions(&turns, &corpus_turns, 4);
    assert_eq!((s4.recall_any, s4.recall_all), (1.0, 1.0));
}
