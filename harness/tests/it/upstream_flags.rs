//! Upstream's command lines as written: its entry points' flag spellings (`--memory_system`,
//! `--dataset_type`, `--set_name`, `--retrieve_k`, `--action_feedback`, `--num_epochs`, ...)
//! are accepted for ours (docs/from-upstream.md).

use crate::common::{assert_ok, harness, harness_in, json, only_run};

#[test]
fn off_policy_runs_with_upstreams_flags() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--memory_system",
            "bm25_message",
            "--dataset_type",
            "single",
            "--set_name",
            "Sample-Stories",
            "--retrieve_k",
            "3",
            "--threads",
            "2",
            "--limit",
            "1",
        ],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/off-policy/results/single/Sample-Stories/bm25_message"),
    );
    let config = json(run.join("run_config.json"));
    assert_eq!(config["memory_system"], "bm25_message");
    assert_eq!(config["retrieve_k"], 3);
    assert_eq!(config["threads"], 2);
}

#[test]
fn sft_train_reads_upstreams_training_flags() {
    // Refused by the value check, which names our setting: the spelling reached it.
    let out = harness(&[
        "sft-train",
        "--action_feedback",
        "like",
        "--num_epochs",
        "0",
        "--learning_rate",
        "1e-3",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("epochs: 0 is not within"), "{stderr}");
}

#[test]
fn a_set_without_data_says_where_data_is_read_from() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args([
            "off-policy",
            "--dataset_type",
            "single",
            "--set_name",
            "Locomo-0",
        ])
        .arg("--store")
        .arg(dir.path().join("store"))
        .arg("--output-dir")
        .arg(dir.path().join("runs"))
        .env_remove("MEMORY_BENCH_PATH")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    for hint in [
        "Locomo-0",
        "--data DIR",
        "$MEMORY_BENCH_PATH",
        "THUIR/MemoryBench",
    ] {
        assert!(stderr.contains(hint), "{hint}: {stderr}");
    }
}
