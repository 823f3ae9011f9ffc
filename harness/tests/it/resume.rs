//! `--resume`: runs stopped part-way (killed with SIGKILL, or stopped while memorizing) go on to
//! the same results as runs that were never interrupted.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{chat_server, harness, in_dir, json as read, last_message, only_run};

/// A slow OpenAI-compatible server whose answer is derived from the question.
pub(crate) fn slow_server(delay_ms: u64) -> u16 {
    chat_server(move |sent| {
        let question = last_message(sent);
        std::thread::sleep(Duration::from_millis(delay_ms));
        let answer: String = question.chars().rev().take(24).collect();
        json!({"choices": [{"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]})
    })
}

pub(crate) fn answer_settings(dir: &Path, port: u16) -> std::path::PathBuf {
    let path = dir.join("llm.toml");
    std::fs::write(
        &path,
        format!(
            "reasks = 0\n[answer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"slow\"\n\
             [memory]\nprovider = \"offline\"\n[simulator]\nprovider = \"offline\"\n[judge]\nprovider = \"offline\"\n"
        ),
    )
    .unwrap();
    path
}

/// Arguments running `command` with answers from the slow server, one at a time, uncached.
pub(crate) fn slow_run(settings: &Path, root: &Path, command: &[&str]) -> Vec<String> {
    let mut args = in_dir(root, command);
    for (flag, value) in [
        ("--threads", "1".to_string()),
        ("--llm-cache", "off".to_string()),
        ("--llm", settings.display().to_string()),
    ] {
        args.extend([flag.to_string(), value]);
    }
    args
}

/// Runs `args` to the end.
fn complete(args: &[String]) {
    let out = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Starts `args` and kills it (SIGKILL) as soon as `ready` holds for the run directory it
/// creates under `runs`; returns that directory.
fn kill_when(args: &[String], runs: &Path, ready: impl Fn(&Path) -> bool) -> PathBuf {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let run = loop {
        let run = std::fs::read_dir(runs)
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path());
        if let Some(run) = run.filter(|run| ready(run)) {
            child.kill().unwrap();
            break run;
        }
        assert!(Instant::now() < deadline, "the run never got there");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.wait().unwrap();
    run
}

/// Lines in a file (0 when it does not exist).
pub(crate) fn lines(path: PathBuf) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// `args` resumed in `run`.
fn resumed(args: &[String], run: &Path) -> Vec<String> {
    let mut args = args.to_vec();
    args.extend(["--resume".to_string(), run.display().to_string()]);
    args
}

#[test]
fn an_off_policy_run_killed_mid_way_resumes_to_the_same_predictions() {
    let port = slow_server(150);
    let dir = tempfile::tempdir().unwrap();
    let settings = answer_settings(dir.path(), port);
    let command = ["off-policy", "--baseline", "bm25_dialog"];
    let results = "runs/off-policy/results/domain/Sample/bm25_dialog";
    let full = slow_run(&settings, &dir.path().join("a"), &command);
    complete(&full);
    let args = slow_run(&settings, &dir.path().join("b"), &command);
    let killed = kill_when(&args, &dir.path().join("b").join(results), |run| {
        lines(run.join("predict.partial.jsonl")) >= 3
    });
    assert!(
        !killed.join("predict.json").exists(),
        "killed before the end"
    );
    complete(&resumed(&args, &killed));
    let reference = only_run(dir.path().join("a").join(results));
    assert_eq!(
        read(killed.join("predict.json")),
        read(reference.join("predict.json"))
    );
}

#[test]
fn a_stepwise_run_killed_mid_way_resumes_to_the_same_steps() {
    let port = slow_server(150);
    let dir = tempfile::tempdir().unwrap();
    let settings = answer_settings(dir.path(), port);
    let command = [
        "stepwise-off-policy",
        "--baseline",
        "bm25_message",
        "--batch-size",
        "10",
    ];
    let results = "runs/step_off-policy/results/domain/Sample/bm25_message";
    let full = slow_run(&settings, &dir.path().join("a"), &command);
    complete(&full);
    let args = slow_run(&settings, &dir.path().join("b"), &command);
    // Killed while answering after the first batch.
    let killed = kill_when(&args, &dir.path().join("b").join(results), |run| {
        lines(run.join("[0,10)/predict.partial.jsonl")) >= 3
    });
    assert!(!killed.join("[0,10)/summary.json").exists());
    complete(&resumed(&args, &killed));
    let reference = only_run(dir.path().join("a").join(results));
    for step in ["begin", "[0,10)", "[10,16)"] {
        assert_eq!(
            read(killed.join(step).join("test_predicts.json")),
            read(reference.join(step).join("test_predicts.json")),
            "{step}"
        );
    }
}

/// Makes `run` look stopped while memorizing batch `batch`: only the batches before it
/// recorded, the batch marked as under way, and the steps from it on unwritten (but for
/// `keep`).
fn stop_while_memorising(run: &Path, batch: usize, steps: &[&str], keep: &[&str]) {
    let path = run.join("progress.json");
    let mut progress = read(path.clone());
    progress["batches"].as_array_mut().unwrap().truncate(batch);
    progress["memorizing"] = Value::Bool(true);
    std::fs::write(&path, progress.to_string()).unwrap();
    for step in steps {
        for entry in std::fs::read_dir(run.join(step)).unwrap() {
            let entry = entry.unwrap().path();
            let name = entry.file_name().unwrap().to_str().unwrap().to_string();
            if !keep.contains(&name.as_str()) {
                std::fs::remove_file(entry).unwrap();
            }
        }
    }
}

#[test]
fn a_run_stopped_while_memorising_rebuilds_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let command = |root: &str| -> Vec<String> {
        in_dir(
            &dir.path().join(root),
            &[
                "stepwise-off-policy",
                "--baseline",
                "bm25_message",
                "--batch-size",
                "10",
            ],
        )
    };
    let results = "runs/step_off-policy/results/domain/Sample/bm25_message";
    complete(&command("a"));
    complete(&command("b"));
    let run = only_run(dir.path().join("b").join(results));
    // Stopped after the second batch reached the memory but before it was marked as memorized:
    // memorizing it again on top would hold its dialogs twice.
    stop_while_memorising(&run, 1, &["[10,16)"], &[]);
    complete(&resumed(&command("b"), &run));
    let reference = only_run(dir.path().join("a").join(results));
    assert_eq!(
        read(run.join("[10,16)/test_predicts.json")),
        read(reference.join("[10,16)/test_predicts.json"))
    );
    let progress = read(run.join("progress.json"));
    assert_eq!(progress["batches"].as_array().unwrap().len(), 2);
    assert_eq!(progress["memorizing"], false);
    assert_eq!(
        read(run.join("[10,16)/memorization.json"))
            .as_array()
            .unwrap()
            .len(),
        6
    );

    // A run resumes only with the flags it was started with.
    let other: Vec<String> = resumed(&command("b"), &run)
        .into_iter()
        .map(|a| if a == "10" { "8".to_string() } else { a })
        .collect();
    let refused = harness(&other.iter().map(String::as_str).collect::<Vec<_>>());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("batch_size = 10"),
        "{stderr}"
    );
}

#[test]
fn an_on_policy_run_resumes_mid_step_and_mid_memorisation() {
    let dir = tempfile::tempdir().unwrap();
    let command = |root: &str| -> Vec<String> {
        in_dir(
            &dir.path().join(root),
            &[
                "on-policy",
                "--baseline",
                "bm25_dialog",
                "--step",
                "2",
                "--batch-size",
                "8",
            ],
        )
    };
    let results = "runs/on-policy/results/domain/Sample/bm25_dialog";
    complete(&command("a"));
    complete(&command("b"));
    let reference = only_run(dir.path().join("a").join(results));
    let run = only_run(dir.path().join("b").join(results));
    let same_as_reference = |run: &Path| {
        for step in ["step_0", "step_1"] {
            for file in [
                "train_dialogs.json",
                "test_predicts.json",
                "evaluate_details.json",
            ] {
                assert_eq!(
                    read(run.join(step).join(file)),
                    read(reference.join(step).join(file)),
                    "{step}/{file}"
                );
            }
        }
    };
    same_as_reference(&run);

    // Stopped while answering step 1's test set, three answers in (and half a line).
    let partial = run.join("step_1/predict.partial.jsonl");
    let kept: String = std::fs::read_to_string(&partial)
        .unwrap()
        .lines()
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect();
    for file in [
        "test_predicts.json",
        "evaluate_details.json",
        "summary.json",
        "timing.json",
    ] {
        std::fs::remove_file(run.join("step_1").join(file)).unwrap();
    }
    std::fs::write(&partial, format!("{kept}{{\"predic")).unwrap();
    complete(&resumed(&command("b"), &run));
    same_as_reference(&run);
    assert_eq!(
        lines(partial.clone()),
        3 + 7,
        "the torn line cut off, the rest appended"
    );

    // Stopped while memorizing step 1's dialogs, after collecting them.
    stop_while_memorising(&run, 1, &["step_1"], &["train_dialogs.json"]);
    complete(&resumed(&command("b"), &run));
    same_as_reference(&run);
}

#[test]
fn a_memory_that_questions_change_is_rebuilt_with_its_questions() {
    let raw =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/locomo/locomo10-dev.json");
    if !raw.exists() {
        mb_core::test_data::skip(&format!("{} is absent", raw.display()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").display().to_string();
    let imported = harness(&["import", "--out", &data, "--locomo", raw.to_str().unwrap()]);
    assert!(imported.status.success());
    // Exchanges stamped by their place in the dialog, not the wall clock (upstream's default),
    // whose times reach the answers and differ from run to run.
    let settings = dir.path().join("memoryos.toml");
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/memory/memoryos.toml"),
    )
    .unwrap();
    let positions = shipped.replace(
        "timestamps = \"wall_clock\"",
        "timestamps = \"dialog_position\"",
    );
    assert_ne!(positions, shipped);
    std::fs::write(&settings, positions).unwrap();
    let settings = settings.display().to_string();
    let command = |root: &str| -> Vec<String> {
        in_dir(
            &dir.path().join(root),
            &[
                "on-policy",
                "--memory-config",
                &settings,
                "--data",
                &data,
                "--dataset-type",
                "single",
                "--set-name",
                "Locomo-0",
                "--baseline",
                "memoryos",
                "--step",
                "2",
                "--batch-size",
                "60",
            ],
        )
    };
    let results = "runs/on-policy/results/single/Locomo-0/memoryos";
    complete(&command("a"));
    complete(&command("b"));
    let reference = only_run(dir.path().join("a").join(results));
    let run = only_run(dir.path().join("b").join(results));
    // MemoryOS's answers warm the sessions they visit: a memory rebuilt from the batches alone
    // would lack the visits of step 0's questions and answer step 1 differently.
    stop_while_memorising(&run, 1, &["step_1"], &["train_dialogs.json"]);
    complete(&resumed(&command("b"), &run));
    for step in ["step_0", "step_1"] {
        for file in ["train_dialogs.json", "test_predicts.json"] {
            assert_eq!(
                read(run.join(step).join(file)),
                read(reference.join(step).join(file)),
                "{step}/{file}"
            );
        }
    }
}

/// `value` without the fields that measure time (or, for `model_usage`, the calls of the
/// process that finished the run), which no two runs share.
fn costs_only(value: &Value) -> Value {
    const TIMES: [&str; 8] = [
        "seconds",
        "memory_dialogs",
        "memory_corpus",
        "predict_memory",
        "predict_llm",
        "memory_processing_seconds_per_case",
        "prediction_seconds_per_case",
        "model_usage",
    ];
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !TIMES.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), costs_only(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(costs_only).collect()),
        other => other.clone(),
    }
}

/// Whether a run has got to the moment it is to be killed at.
type KillMoment = fn(&Path) -> bool;

#[test]
fn a_resumed_run_reports_the_costs_of_a_clean_run_wherever_it_was_killed() {
    let port = slow_server(150);
    let dir = tempfile::tempdir().unwrap();
    let settings = answer_settings(dir.path(), port);
    // Mem0 makes LLM operations both memorizing and ingesting Sample-Locomo's corpus (the
    // first of the set's datasets: six cases, then Sample-Stories' four).
    let command = ["off-policy", "--baseline", "mem0"];
    let results = "runs/off-policy/results/domain/Sample/mem0";
    complete(&slow_run(&settings, &dir.path().join("clean"), &command));
    let clean = only_run(dir.path().join("clean").join(results));
    let moments: [(&str, KillMoment); 3] = [
        ("corpus ingested", |run| {
            run.join("corpus_timing.json").exists()
        }),
        ("mid-corpus dataset", |run| {
            lines(run.join("predict.partial.jsonl")) >= 3
        }),
        ("after the corpus dataset", |run| {
            lines(run.join("predict.partial.jsonl")) >= 7
        }),
    ];
    for (index, (moment, ready)) in moments.into_iter().enumerate() {
        let root = dir.path().join(format!("killed-{index}"));
        let args = slow_run(&settings, &root, &command);
        let killed = kill_when(&args, &root.join(results), ready);
        assert!(!killed.join("predict.json").exists(), "{moment}");
        complete(&resumed(&args, &killed));
        for file in ["predict.json", "memorization.json"] {
            assert_eq!(
                costs_only(&read(killed.join(file))),
                costs_only(&read(clean.join(file))),
                "{moment}: {file}"
            );
        }
        let corpus = read(killed.join("corpus_timing.json"));
        assert_eq!(
            costs_only(&corpus),
            costs_only(&read(clean.join("corpus_timing.json"))),
            "{moment}: corpus_timing.json"
        );
        assert!(corpus["Sample-Locomo"]["llm_operations"].as_u64() > Some(0));
        assert_eq!(
            costs_only(&read(killed.join("summary.json"))["timing"]),
            costs_only(&read(clean.join("summary.json"))["timing"]),
            "{moment}: the summary's timing"
        );
    }
}
