//! `mb-harness feedback-usefulness` on the built-in sample: each training question answered
//! with its recorded feedback dialog as context, the dialogs' own answers scored on the test
//! questions, with upstream's restrictions and result files.

use crate::common::{assert_ok, harness_in, json, only_run};

#[test]
fn training_questions_are_answered_with_their_dialogs_and_both_sides_scored() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(dir.path(), &["feedback-usefulness"]);
    assert_ok(&out);
    let printed = String::from_utf8_lossy(&out.stdout);
    // Stories by Vanilla; the LoCoMo conversation by the memory system (the default BM25-M).
    assert!(printed.contains("Sample-Stories wo_memory"), "{printed}");
    assert!(printed.contains("Sample-Locomo bm25_message"), "{printed}");
    let results = dir.path().join("runs/test_feedback/results/domain/Sample");
    let stories = only_run(results.join("wo_memory/Sample-Stories"));
    // Upstream's default `--sample -1` leaves out each split's last row: 16 and 4 rows.
    let train = json(stories.join("train_predicts.json"));
    let train = train.as_array().unwrap();
    assert_eq!(train.len(), 15);
    let test = json(stories.join("test_predicts.json"));
    assert_eq!(test.as_array().unwrap().len(), 3);
    // The question's message carries the dialog, each message as `role: content`.
    let asked = train[0]["messages"].as_array().unwrap();
    let prompt = asked.last().unwrap()["content"].as_str().unwrap();
    assert!(prompt.starts_with("Context:\n    user: "), "{prompt}");
    assert!(prompt.contains("\nassistant: "), "{prompt}");
    assert!(train
        .iter()
        .all(|p| p["response"].as_str().is_some_and(|r| !r.is_empty())));
    // The test side is the dialogs' last answers, not a model's.
    assert!(test[0]["messages"].as_array().unwrap().is_empty());
    assert!(!test[0]["response"].as_str().unwrap().is_empty());
    let compare = json(stories.join("compare.json"));
    for side in ["train_performance", "test_performance"] {
        assert!(
            compare[side].as_object().is_some_and(|m| !m.is_empty()),
            "{compare}"
        );
    }
    for file in [
        "train_evaluate_details.json",
        "test_summary.json",
        "run_config.json",
    ] {
        assert!(stories.join(file).is_file(), "{file}");
    }
    assert!(only_run(results.join("bm25_message/Sample-Locomo"))
        .join("compare.json")
        .is_file());

    // Vanilla cannot run LoCoMo, nor a memory system the others: nothing else to run.
    let refused = harness_in(
        dir.path(),
        &[
            "feedback-usefulness",
            "--dataset-type",
            "single",
            "--set-name",
            "Sample-Locomo",
            "--baseline",
            "wo_memory",
        ],
    );
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("ran nothing"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
