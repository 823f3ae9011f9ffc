//! `mb-harness action-feedback` on the built-in sample: a memory of only the training dialogs
//! whose implicit feedback holds the action, cached per action, with upstream's result layout.

use std::collections::BTreeSet;

use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::load;
use mb_datasets::row::Action;
use mb_datasets::sample::{sample_source, SAMPLE_SET};

use crate::common::{assert_ok, harness_in, json, only_run};

/// The `test_idx` of the sample's training rows whose dialog's feedback holds `action`.
fn rows_with(action: Action) -> BTreeSet<u64> {
    let catalog = Catalog::builtin().unwrap();
    let datasets = load(
        &sample_source().unwrap(),
        &catalog,
        DatasetType::Domain,
        SAMPLE_SET,
    )
    .unwrap();
    datasets
        .iter()
        .flat_map(|d| &d.train)
        .filter(|row| {
            row.dialogs
                .get("")
                .is_some_and(|dialog| dialog.feedback.iter().any(|f| f.actions.contains(&action)))
        })
        .map(|row| row.test_idx)
        .collect()
}

#[test]
fn each_action_memorizes_its_dialogs_and_writes_upstreams_files() {
    let dir = tempfile::tempdir().unwrap();
    let all_dialogs = 16; // the sample's training dialogs (Sample-Stories)
    let mut counts = Vec::new();
    for (action, name) in [(Action::Like, "like"), (Action::Copy, "copy")] {
        let expected = rows_with(action);
        assert!(
            !expected.is_empty() && expected.len() < all_dialogs,
            "{name}: the sample must keep some dialogs and drop others"
        );
        let out = harness_in(
            dir.path(),
            &[
                "action-feedback",
                "--action",
                name,
                "--baseline",
                "bm25_message",
            ],
        );
        assert_ok(&out);
        let run = only_run(
            dir.path()
                .join("runs/action_feedback/results/domain/Sample/bm25_message")
                .join(name),
        );
        let config = json(run.join("run_config.json"));
        assert_eq!(config["action_feedback"], name);
        let memorized = json(run.join("memorization.json"));
        assert_eq!(
            memorized.as_array().unwrap().len(),
            expected.len(),
            "{name}"
        );
        // Every test question is answered, on the dialog memory alone.
        let predictions = json(run.join("predict.json"));
        assert_eq!(predictions.as_array().unwrap().len(), 10);
        assert!(json(run.join("summary.json"))["summary"]["average"].is_number());
        counts.push(expected.len());
    }
    // A second run of an action reuses its cached memory and builds nothing.
    let again = harness_in(
        dir.path(),
        &[
            "action-feedback",
            "--action",
            "like",
            "--baseline",
            "bm25_message",
        ],
    );
    assert_ok(&again);
    let runs: Vec<_> = std::fs::read_dir(
        dir.path()
            .join("runs/action_feedback/results/domain/Sample/bm25_message/like"),
    )
    .unwrap()
    .map(|e| e.unwrap().path())
    .filter(|p| !p.join("memory_built_by_this_run.json").exists())
    .collect();
    assert_eq!(runs.len(), 1, "the second run reused the memory: {runs:?}");
    assert!(counts.iter().all(|&n| n > 0));
}
