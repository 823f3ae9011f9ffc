//! `stepwise-off-policy` and `train-performance` on the built-in sample.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn harness(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.extend([
        "--store".to_string(),
        dir.join("store").display().to_string(),
        "--output-dir".to_string(),
        dir.join("runs").display().to_string(),
    ]);
    Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(&all)
        .output()
        .unwrap()
}

fn only_run(parent: PathBuf) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1);
    dirs.pop().unwrap()
}

fn json(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn stepwise_evaluates_before_and_after_each_batch() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness(
        dir.path(),
        &[
            "stepwise-off-policy",
            "--baseline",
            "bm25_message",
            "--batch-size",
            "10",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let out = harness(
        dir.path(),
        &["train-performance", "--baseline", "bm25_dialog"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = only_run(
        dir.path()
            .join("runs/train_performance/result/domain/Sample/bm25_dialog"),
    );
    let predictions = json(run.join("predict.json"));
    // 24 LoCoMo and 16 story training rows.
    assert_eq!(predictions.as_array().unwrap().len(), 40);
    let refused = harness(
        dir.path(),
        &["stepwise-off-policy", "--baseline", "wo_memory"],
    );
    assert!(!refused.status.success());
}
