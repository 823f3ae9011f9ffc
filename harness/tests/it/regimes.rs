//! `stepwise-off-policy` and `train-performance` on the built-in sample.

use std::process::Command;

use serde_json::Value;

use crate::common::{assert_ok, harness, harness_in, json, only_run};

#[test]
fn stepwise_evaluates_before_and_after_each_batch() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "stepwise-off-policy",
            "--baseline",
            "bm25_message",
            "--batch-size",
            "10",
        ],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/step_off-policy/results/domain/Sample/bm25_message"),
    );
    // The sample has 16 training dialogs (Sample-Stories; Sample-Locomo records none).
    for step in ["begin", "[0,10)", "[10,16)"] {
        let predictions = json(run.join(step).join("test_predicts.json"));
        assert_eq!(predictions.as_array().unwrap().len(), 10, "{step}");
        assert!(json(run.join(step).join("summary.json"))["summary"]["average"].is_number());
    }
    assert_eq!(
        json(run.join("[0,10)/training_dialogs.json"))
            .as_array()
            .unwrap()
            .len(),
        10
    );
    assert_eq!(
        json(run.join("[10,16)/training_dialogs.json"))
            .as_array()
            .unwrap()
            .len(),
        6
    );
    assert!(!run.join("begin/training_dialogs.json").exists());
    assert_eq!(json(run.join("run_config.json"))["batch_size"], 10);
}

#[test]
fn train_performance_asks_the_training_questions() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(
        dir.path(),
        &["train-performance", "--baseline", "bm25_dialog"],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/train_performance/result/domain/Sample/bm25_dialog"),
    );
    let predictions = json(run.join("predict.json"));
    // 24 LoCoMo and 16 story training rows.
    assert_eq!(predictions.as_array().unwrap().len(), 40);
    let refused = harness_in(
        dir.path(),
        &["stepwise-off-policy", "--baseline", "wo_memory"],
    );
    assert!(!refused.status.success());
}

#[test]
fn on_policy_collects_feedback_dialogs_drawn_as_python_draws_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "on-policy",
            "--baseline",
            "bm25_dialog",
            "--step",
            "2",
            "--batch-size",
            "8",
        ],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/on-policy/results/domain/Sample/bm25_dialog"),
    );
    // Upstream draws with `random.seed(42)` once, then `random.sample(range(len(pool)), 8)`
    // per step, over the 40 training rows of the sample (24 LoCoMo, then 16 stories).
    let python = Command::new("python3")
        .args([
            "-c",
            "import random, json; random.seed(42); print(json.dumps([random.sample(range(40), 8) for _ in range(2)]))",
        ])
        .output()
        .unwrap();
    let expected: Vec<Vec<u64>> = serde_json::from_slice(&python.stdout).unwrap();
    for (step, expected) in expected.iter().enumerate() {
        let dialogs = json(run.join(format!("step_{step}/train_dialogs.json")));
        let drawn: Vec<u64> = dialogs
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["training_set_idx"].as_u64().unwrap())
            .collect();
        assert_eq!(&drawn, expected, "step {step}");
        for dialog in dialogs.as_array().unwrap() {
            let messages = dialog["dialog"].as_array().unwrap();
            assert_eq!(messages[1]["role"], "assistant");
            let feedback = &dialog["implicit_feedback"][0];
            assert_eq!(feedback["round"], 0);
            // Continued conversations end with the user's feedback, as upstream's do.
            let ended = feedback["terminated"].as_bool().unwrap();
            assert_eq!(messages.len(), if ended { 2 } else { 3 }, "{dialog}");
        }
        assert_eq!(
            json(run.join(format!("step_{step}/test_predicts.json")))
                .as_array()
                .unwrap()
                .len(),
            10
        );
    }
}

/// The dialogs of an on-policy run's only step, run with `flags`.
fn on_policy_dialogs(flags: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "on-policy",
        "--baseline",
        "bm25_dialog",
        "--step",
        "1",
        "--batch-size",
        "12",
    ];
    args.extend(flags);
    let out = harness_in(dir.path(), &args);
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/on-policy/results/domain/Sample/bm25_dialog"),
    );
    json(run.join("step_0/train_dialogs.json"))
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn on_policy_rounds_follow_max_rounds_and_feedback_answers() {
    // One round: the answer alone, no feedback.
    for dialog in on_policy_dialogs(&["--max-rounds", "1"]) {
        assert_eq!(dialog["dialog"].as_array().unwrap().len(), 2, "{dialog}");
        assert_eq!(dialog["implicit_feedback"], serde_json::json!([]));
    }
    // Feedback answered, as upstream meant: every feedback that does not end the dialog gets
    // the user's message and an answer, up to three answers.
    let dialogs = on_policy_dialogs(&["--answer-feedback"]);
    for dialog in &dialogs {
        let messages = dialog["dialog"].as_array().unwrap();
        let feedback = dialog["implicit_feedback"].as_array().unwrap();
        let answers = messages.iter().filter(|m| m["role"] == "assistant").count();
        let continued = feedback.iter().filter(|f| f["terminated"] == false).count();
        assert_eq!(answers, 1 + continued, "{dialog}");
        assert!((1..=2).contains(&feedback.len()), "{dialog}");
        for (round, entry) in feedback.iter().enumerate() {
            assert_eq!(entry["round"], round, "rounds from 0 on-policy");
        }
        assert_eq!(messages.last().unwrap()["role"], "assistant");
    }
    assert!(
        dialogs
            .iter()
            .any(|d| d["implicit_feedback"].as_array().unwrap().len() == 2),
        "some dialog goes to a second round"
    );
    // Upstream's follow-up answers are thrown away (the default) or never asked for: the
    // dialogs are the same either way, and end with the user's first feedback.
    let discarded = on_policy_dialogs(&[]);
    let skipped = on_policy_dialogs(&["--feedback-answers", "skipped"]);
    let messages = |dialogs: &[serde_json::Value]| -> Vec<serde_json::Value> {
        dialogs.iter().map(|d| d["dialog"].clone()).collect()
    };
    assert_eq!(messages(&discarded), messages(&skipped));
    assert!(discarded.iter().any(|d| {
        let feedback = d["implicit_feedback"].as_array().unwrap();
        feedback.len() == 1 && feedback[0]["terminated"] == false
    }));
    for dialog in &discarded {
        let messages = dialog["dialog"].as_array().unwrap();
        assert_eq!(
            messages.iter().filter(|m| m["role"] == "assistant").count(),
            1
        );
    }
}

#[test]
fn report_compares_runs_in_one_offline_page() {
    let dir = tempfile::tempdir().unwrap();
    for baseline in ["bm25_message", "bm25_dialog"] {
        let out = harness_in(dir.path(), &["off-policy", "--baseline", baseline]);
        assert_ok(&out);
    }
    let page = dir.path().join("report.html");
    let out = harness(&[
        "report",
        dir.path().join("runs").to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
    ]);
    assert_ok(&out);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("2 runs; 1 group of comparable runs; report written to "),
        "{said}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("bm25_message")
            && html.contains("bm25_dialog")
            && html.contains("domain/Sample")
    );
    // Score, LLM operations, efficiency and memorization charts, inline, with no external
    // resource (no model was called: no token chart).
    assert_eq!(html.matches("<svg").count(), 4);
    assert!(html.contains("cumulative seconds over training dialogs"));
    assert!(
        !html.contains("http://") && !html.contains("https://")
            || html.contains("xmlns=\"http://www.w3.org/2000/svg\"")
    );

    // With a stepwise run, each system's score after every step is drawn, steps in order.
    let out = harness_in(
        dir.path(),
        &[
            "stepwise-off-policy",
            "--baseline",
            "bm25_message",
            "--batch-size",
            "10",
        ],
    );
    assert!(out.status.success());
    let out = harness(&[
        "report",
        dir.path().join("runs").to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("score after each step").count(), 1);
    let curve = &html[html.find("score after each step").unwrap()..];
    let at = |label: &str| curve.find(label).unwrap_or_else(|| panic!("{label}"));
    assert!(at("begin") < at("[0,10)") && at("[0,10)") < at("[10,16)"));
    assert!(curve.contains("bm25_message"));

    let empty = tempfile::tempdir().unwrap();
    let none = harness(&[
        "report",
        empty.path().to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
    ]);
    assert!(!none.status.success());
}

#[test]
fn generated_dialogs_feed_off_policy() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = harness_in(
        dir.path(),
        &[
            "generate-dialogs",
            "--baseline",
            "bm25_dialog",
            "--out",
            data.to_str().unwrap(),
            "--max-rounds",
            "2",
        ],
    );
    assert_ok(&out);
    let rows: Vec<Value> = std::fs::read_to_string(data.join("dataset/Sample-Locomo/train.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 24);
    for row in &rows {
        // The corpus dataset's dialogs are the system's: its memory prompt, with the question kept.
        let dialog: Value =
            serde_json::from_str(row["dialog_bm25_dialog"].as_str().unwrap()).unwrap();
        let dialog = dialog.as_array().unwrap();
        assert!(dialog[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Context:\n"));
        assert!(dialog[0]["origin_content"]
            .as_str()
            .unwrap()
            .contains("Question:"));
        let assistants = dialog.iter().filter(|m| m["role"] == "assistant").count();
        assert!((1..=2).contains(&assistants), "{dialog:?}");
        let feedback: Value =
            serde_json::from_str(row["implicit_feedback_bm25_dialog"].as_str().unwrap()).unwrap();
        assert_eq!(feedback[0]["round"], 1);
    }
    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--baseline",
            "bm25_dialog",
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/off-policy/results/domain/Sample/bm25_dialog"),
    );
    let timing = json(run.join("timing.json"));
    // The memory now holds the 24 generated LoCoMo dialogs besides the 16 stories.
    assert!(timing[0]["seconds"]["memory_dialogs"].as_f64().unwrap() > 0.0);
    // Generating again replays the recorded answers; --resume is refused, saying so.
    let refused = harness_in(
        dir.path(),
        &[
            "generate-dialogs",
            "--baseline",
            "bm25_dialog",
            "--out",
            data.to_str().unwrap(),
            "--resume",
            run.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("run it again"),
        "{stderr}"
    );
}
