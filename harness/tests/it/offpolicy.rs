//! `mb-harness off-policy` on the built-in sample: upstream's result files, timing, the memory
//! reused from the store, and a resumed run that ends with the same predictions.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{assert_ok, harness, json};

fn off_policy(store: &Path, output: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "off-policy".to_string(),
        "--baseline".into(),
        "bm25_dialog".into(),
        "--store".into(),
        store.display().to_string(),
        "--output-dir".into(),
        output.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    harness(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn run_dir(output: &Path) -> PathBuf {
    let runs = output.join("off-policy/results/domain/Sample/bm25_dialog");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs.pop().unwrap()
}

#[test]
fn off_policy_writes_upstream_files_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("store"), dir.path().join("runs"));
    let first = off_policy(&store, &output, &[]);
    assert_ok(&first);
    let table = String::from_utf8(first.stdout).unwrap();
    assert!(
        table.contains("memory s/case") && table.contains("bm25_dialog"),
        "{table}"
    );
    let run = run_dir(&output);
    let predictions = json(run.join("predict.json"));
    let predictions = predictions.as_array().unwrap();
    // The sample's test split: 6 LoCoMo questions, then 4 stories, each by test_idx.
    assert_eq!(predictions.len(), 10);
    assert_eq!(predictions[0]["dataset"], "Sample-Locomo");
    assert_eq!(predictions[9]["dataset"], "Sample-Stories");
    assert!(predictions[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .starts_with("Context:\n"));
    let details = json(run.join("evaluate_details.json"));
    assert_eq!(details.as_array().unwrap().len(), 10);
    assert!(details[0]["metrics"]["f1"].is_number());
    let summary = json(run.join("summary.json"));
    assert!(summary["summary"]["average"].is_number());
    assert_eq!(summary["timing"]["cases"], 10);
    let timing = json(run.join("timing.json"));
    assert!(timing[0]["seconds"]["memory_dialogs"].as_f64().unwrap() > 0.0);
    // Each memorized dialog's cost, in memorization order: the 16 story dialogs (the sample's
    // LoCoMo rows record none), adding up to the memorization every case has a share of.
    let memorized = json(run.join("memorization.json"));
    let memorized = memorized.as_array().unwrap();
    assert_eq!(memorized.len(), 16);
    assert!(memorized.iter().all(|d| d["dataset"] == "Sample-Stories"));
    let total: f64 = memorized
        .iter()
        .map(|d| d["cost"]["seconds"].as_f64().unwrap())
        .sum();
    let share = timing[0]["seconds"]["memory_dialogs"].as_f64().unwrap();
    assert!(
        (total / 10.0 - share).abs() < 1e-9,
        "{total} over 10 cases vs {share}"
    );
    assert_eq!(
        json(run.join("run_config.json"))["memory_system"],
        "bm25_dialog"
    );

    // `evaluate` and `summarize` on the run directory reproduce its files.
    for command in ["evaluate", "summarize"] {
        let output = harness(&[
            command,
            run.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ]);
        assert!(
            output.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            json(run.join("evaluate_details.json")),
            details,
            "{command}"
        );
        assert_eq!(json(run.join("summary.json")), summary, "{command}");
    }

    // An interrupted run: only three predictions were made. Resuming finishes the others and
    // gives the same predictions as the uninterrupted run.
    let partial = std::fs::read_to_string(run.join("predict.partial.jsonl")).unwrap();
    let interrupted = dir.path().join("interrupted");
    std::fs::create_dir_all(&interrupted).unwrap();
    std::fs::copy(
        run.join("run_config.json"),
        interrupted.join("run_config.json"),
    )
    .unwrap();
    let kept: String = partial.lines().take(3).map(|l| format!("{l}\n")).collect();
    // A crash can leave half a line behind.
    std::fs::write(
        interrupted.join("predict.partial.jsonl"),
        format!("{kept}{{\"predic"),
    )
    .unwrap();
    let resumed = off_policy(
        &store,
        &output,
        &["--resume", interrupted.to_str().unwrap()],
    );
    assert_ok(&resumed);
    assert_eq!(
        json(interrupted.join("predict.json")),
        json(run.join("predict.json"))
    );
    assert_eq!(
        json(interrupted.join("evaluate_details.json")),
        json(run.join("evaluate_details.json"))
    );
    // The torn line was cut off, not kept: every line of the finished log reads.
    let log = std::fs::read_to_string(interrupted.join("predict.partial.jsonl")).unwrap();
    assert!(log
        .lines()
        .all(|line| serde_json::from_str::<Value>(line).is_ok()));

    // A damaged line inside the log is an error naming it; nothing is dropped silently.
    let damaged = dir.path().join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    std::fs::copy(run.join("run_config.json"), damaged.join("run_config.json")).unwrap();
    let mut lines: Vec<&str> = partial.lines().take(3).collect();
    lines[1] = "{\"prediction\": garbage}";
    std::fs::write(
        damaged.join("predict.partial.jsonl"),
        format!("{}\n", lines.join("\n")),
    )
    .unwrap();
    let refused = off_policy(&store, &output, &["--resume", damaged.to_str().unwrap()]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(
        stderr.contains("predict.partial.jsonl line 2") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// A run records the settings its memory was built with: `--resume` alone goes on with them,
/// and refuses other ones.
#[test]
fn runs_record_their_memory_settings() {
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("store"), dir.path().join("runs"));
    let plain = dir.path().join("plain.toml");
    std::fs::write(&plain, "retrieve_k = 3\nquery_syntax = \"plain\"\n").unwrap();
    assert_ok(&off_policy(
        &store,
        &output,
        &["--memory-config", plain.to_str().unwrap()],
    ));
    let run = run_dir(&output);
    let config = json(run.join("run_config.json"));
    assert_eq!(config["memory_system_config"], plain.to_str().unwrap());
    assert_eq!(config["memory_settings"]["query_syntax"], "plain");
    assert_eq!(config["memory_settings"]["retrieve_k"], 3);
    assert_ok(&off_policy(
        &store,
        &output,
        &["--resume", run.to_str().unwrap()],
    ));
    let other = dir.path().join("other.toml");
    std::fs::write(&other, "retrieve_k = 4\n").unwrap();
    let resumed = off_policy(
        &store,
        &output,
        &[
            "--memory-config",
            other.to_str().unwrap(),
            "--resume",
            run.to_str().unwrap(),
        ],
    );
    assert!(!resumed.status.success());
    let stderr = String::from_utf8(resumed.stderr).unwrap();
    assert!(stderr.contains("memory_settings"), "{stderr}");
}

/// `--limit N` answers the first N test cases and memorizes the first N training rows' dialogs
/// of each dataset, is recorded, and `--resume` refuses another limit.
#[test]
fn limit_sizes_a_run_and_defines_it() {
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("store"), dir.path().join("runs"));
    assert_ok(&off_policy(&store, &output, &["--limit", "2"]));
    let run = run_dir(&output);
    let predictions = json(run.join("predict.json"));
    let per_dataset = |entries: &serde_json::Value, dataset: &str| {
        entries
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["dataset"] == dataset)
            .count()
    };
    for dataset in ["Sample-Locomo", "Sample-Stories"] {
        assert_eq!(per_dataset(&predictions, dataset), 2, "{dataset}");
    }
    assert_eq!(predictions.as_array().unwrap().len(), 4);
    // Only the stories record training dialogs (16 of them without a limit).
    let memorized = json(run.join("memorization.json"));
    assert_eq!(per_dataset(&memorized, "Sample-Stories"), 2);
    assert_eq!(memorized.as_array().unwrap().len(), 2);
    let config = json(run.join("run_config.json"));
    assert_eq!(config["limit"], 2);
    assert_eq!(json(run.join("summary.json"))["timing"]["cases"], 4);

    let other = off_policy(
        &store,
        &output,
        &["--limit", "3", "--resume", run.to_str().unwrap()],
    );
    assert!(!other.status.success());
    let stderr = String::from_utf8(other.stderr).unwrap();
    assert!(stderr.contains("limit = 2"), "{stderr}");
    assert_ok(&off_policy(
        &store,
        &output,
        &["--limit", "2", "--resume", run.to_str().unwrap()],
    ));
    assert!(!off_policy(&store, &output, &["--limit", "0"])
        .status
        .success());

    // A run recorded before `--limit` existed (or its command) resumes without one.
    let older = dir.path().join("older");
    std::fs::create_dir_all(&older).unwrap();
    let mut config = config;
    config.as_object_mut().unwrap().remove("limit");
    config.as_object_mut().unwrap().remove("command");
    std::fs::write(older.join("run_config.json"), config.to_string()).unwrap();
    assert_ok(&off_policy(
        &store,
        &output,
        &["--resume", older.to_str().unwrap()],
    ));
    assert_eq!(
        json(older.join("predict.json")).as_array().unwrap().len(),
        10
    );
}

/// MemoryOS writes its metadata at exit upstream: the corpus copy of a memory the run built
/// starts without sessions (fewer model calls while ingesting), one of a cached memory whole.
#[test]
fn a_corpus_copy_of_a_memory_built_by_the_run_lacks_memoryos_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("store"), dir.path().join("runs"));
    let run = |flags: &[&str]| {
        let mut args = vec![
            "off-policy",
            "--baseline",
            "memoryos",
            "--embedder",
            "hashing",
        ];
        args.extend_from_slice(flags);
        args.extend([
            "--store",
            store.to_str().unwrap(),
            "--output-dir",
            output.to_str().unwrap(),
        ]);
        assert_ok(&harness(&args));
        let runs = output.join("off-policy/results/domain/Sample/memoryos");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(runs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        let newest = dirs.pop().unwrap();
        let corpus: Value = json(newest.join("corpus_timing.json"));
        let built = newest.join("memory_built_by_this_run.json").exists();
        (
            corpus["Sample-Locomo"]["llm_operations"].as_u64().unwrap(),
            built,
        )
    };
    let (built_here, marked) = run(&[]);
    assert!(marked);
    // The second run reuses the cached memory, as if its metadata had been written at exit.
    let (cached, marked) = run(&[]);
    assert!(!marked);
    assert!(
        built_here < cached,
        "{built_here} vs {cached} corpus operations"
    );
}

/// How the summary counts upstream's numpy scores is a flag recorded with the run: upstream's
/// regimes' way (multi-hop F1 as 0) by default.
#[test]
fn runs_record_how_numpy_scores_count() {
    let dir = tempfile::tempdir().unwrap();
    let (store, output) = (dir.path().join("store"), dir.path().join("runs"));
    assert_ok(&off_policy(&store, &output, &["--limit", "2"]));
    let config = json(run_dir(&output).join("run_config.json"));
    assert_eq!(config["numpy_scores"], "as-zero");
    let out = off_policy(
        &store,
        &output,
        &["--limit", "2", "--numpy-scores", "sometimes"],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("as-zero or counted"), "{stderr}");
}
