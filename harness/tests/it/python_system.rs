//! A memory system written in Python (`py/examples/keyword_memory.py`), run by the harness
//! through `--baseline py:keyword_memory:KeywordMemory`: every regime, its model calls through
//! the harness's model layer, the memory copied for a corpus dataset and cached for a later
//! run, a killed run resumed, and its failures named.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{assert_ok, chat_server, harness_in, in_dir, json, last_message, only_run};

const SYSTEM: &str = "py:keyword_memory:KeywordMemory";

/// The example's settings, its import path made absolute (the harness runs in `dir`).
fn settings(dir: &Path) -> PathBuf {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../py/examples");
    let file = dir.join("keyword_memory.toml");
    std::fs::write(
        &file,
        format!(
            "retrieve_k = 4\ninterpreter = \"python3\"\npath = [{:?}]\n[config]\n",
            examples.display().to_string()
        ),
    )
    .unwrap();
    file
}

fn run(dir: &Path, regime: &[&str], extra: &[&str]) -> std::process::Output {
    let config = settings(dir);
    let mut args: Vec<&str> = regime.to_vec();
    args.extend([
        "--baseline",
        SYSTEM,
        "--memory-config",
        config.to_str().unwrap(),
    ]);
    args.extend(extra);
    harness_in(dir, &args)
}

/// Where a regime's runs of the system are (`off-policy/results`, `train_performance/result`, …).
fn results(dir: &Path, regime: &str) -> PathBuf {
    dir.join(format!("runs/{regime}/domain/Sample"))
        .join(SYSTEM)
}

#[test]
fn a_python_system_runs_in_every_regime_offline() {
    let dir = tempfile::tempdir().unwrap();
    for (regime, folder) in [
        (vec!["off-policy"], "off-policy/results"),
        (vec!["train-performance"], "train_performance/result"),
        (
            vec!["stepwise-off-policy", "--batch-size", "8"],
            "step_off-policy/results",
        ),
        (
            vec!["on-policy", "--step", "1", "--batch-size", "4"],
            "on-policy/results",
        ),
    ] {
        let out = run(dir.path(), &regime, &[]);
        assert_ok(&out);
        let table = String::from_utf8(out.stdout).unwrap();
        assert!(table.contains(SYSTEM), "{regime:?}: {table}");
        let run_dir = only_run(results(dir.path(), folder));
        assert!(run_dir.join("run_config.json").is_file(), "{regime:?}");
    }
    // Off-policy's answers: the offline answer model read the memories the system retrieved
    // (its prompt holds them), and the memory's share of each case is timed apart.
    let run_dir = only_run(results(dir.path(), "off-policy/results"));
    let predictions = json(run_dir.join("predict.json"));
    let predictions = predictions.as_array().unwrap();
    assert_eq!(predictions.len(), 10);
    let prompt = last_message(&predictions[0]).to_string();
    assert!(prompt.starts_with("Memories:\n"), "{prompt}");
    assert!(predictions
        .iter()
        .all(|p| !p["response"].as_str().unwrap().is_empty()));
    let summary = json(run_dir.join("summary.json"));
    assert!(
        summary["timing"]["memory_processing_seconds_per_case"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn a_python_systems_model_calls_go_through_the_harness() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let port = chat_server(move |sent| {
        let last = last_message(sent).to_string();
        counter.fetch_add(1, Ordering::SeqCst);
        json!({
            "choices": [{"message": {"role": "assistant", "content": format!("seen {} chars", last.len())}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3},
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let llm = dir.path().join("llm.toml");
    std::fs::write(
        &llm,
        format!(
            "reasks = 1\n[answer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n\
             [memory]\nprovider = \"offline\"\n[simulator]\nprovider = \"offline\"\n[judge]\nprovider = \"offline\"\n"
        ),
    )
    .unwrap();
    let out = run(
        dir.path(),
        &["off-policy"],
        &["--llm", llm.to_str().unwrap(), "--llm-cache", "off"],
    );
    assert_ok(&out);
    // The harness's check that the model answers, then one call per test question.
    assert_eq!(calls.load(Ordering::SeqCst), 1 + 10);
    let run_dir = only_run(results(dir.path(), "off-policy/results"));
    for prediction in json(run_dir.join("predict.json")).as_array().unwrap() {
        assert!(prediction["response"]
            .as_str()
            .unwrap()
            .starts_with("seen "));
    }
    // Accounting charges each case its own call's tokens.
    for case in json(run_dir.join("timing.json")).as_array().unwrap() {
        assert_eq!(case["seconds"]["input_tokens_predict"], 7.0, "{case}");
    }
}

#[test]
fn a_corpus_is_memorized_on_a_copy_and_the_trained_memory_is_reused() {
    let dir = tempfile::tempdir().unwrap();
    assert_ok(&run(dir.path(), &["off-policy"], &[]));
    // The trained memory's folder holds the training dialogs only: the sample conversation was
    // memorized into the copy a LoCoMo dataset is answered on.
    let folders: Vec<PathBuf> = std::fs::read_dir(dir.path().join("store/python"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let trained = folders
        .iter()
        .find(|f| !f.file_name().unwrap().to_str().unwrap().contains("_copy"))
        .unwrap();
    let memories = std::fs::read_to_string(trained.join("memories.jsonl")).unwrap();
    assert!(memories.lines().count() > 0);
    assert!(
        memories.lines().all(|l| l.contains("\"conv_")),
        "{memories}"
    );
    // A second run reuses the cached memory: its memorization is the first run's record, and
    // the memory's file is as the first run left it.
    let memorized =
        json(only_run(results(dir.path(), "off-policy/results")).join("memorization.json"));
    std::fs::remove_dir_all(results(dir.path(), "off-policy/results")).unwrap();
    assert_ok(&run(dir.path(), &["off-policy"], &[]));
    let again = json(only_run(results(dir.path(), "off-policy/results")).join("memorization.json"));
    assert_eq!(again, memorized);
    assert_eq!(
        std::fs::read_to_string(trained.join("memories.jsonl")).unwrap(),
        memories
    );
}

#[test]
fn a_python_system_that_cannot_start_is_named_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = settings(dir.path());
    for (baseline, expected) in [
        ("py:no_such_module:Memory", "no_such_module"),
        ("py:keyword_memory:NoSuchClass", "has no NoSuchClass"),
        ("py:keyword_memory", "module.path:ClassName"),
    ] {
        let out = harness_in(
            dir.path(),
            &[
                "off-policy",
                "--baseline",
                baseline,
                "--memory-config",
                config.to_str().unwrap(),
            ],
        );
        assert!(!out.status.success(), "{baseline}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().last().unwrap_or_default();
        assert!(last.contains(expected), "{baseline}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A run killed part-way (SIGKILL, the host process left without its harness) resumes to the
/// predictions of a run never interrupted.
#[test]
fn a_killed_python_system_run_resumes_to_the_same_predictions() {
    let port = crate::resume::slow_server(150);
    let dir = tempfile::tempdir().unwrap();
    let llm = dir.path().join("llm.toml");
    std::fs::write(
        &llm,
        format!(
            "[answer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n\
             [memory]\nprovider = \"offline\"\n[simulator]\nprovider = \"offline\"\n[judge]\nprovider = \"offline\"\n"
        ),
    )
    .unwrap();
    let config = settings(dir.path());
    let args = |root: &Path| -> Vec<String> {
        let mut args = in_dir(
            root,
            &[
                "off-policy",
                "--baseline",
                SYSTEM,
                "--memory-config",
                config.to_str().unwrap(),
            ],
        );
        for flag in [
            "--threads",
            "1",
            "--llm-cache",
            "off",
            "--llm",
            llm.to_str().unwrap(),
        ] {
            args.push(flag.to_string());
        }
        args
    };
    let binary = env!("CARGO_BIN_EXE_mb-harness");
    let whole = dir.path().join("a");
    assert_ok(&Command::new(binary).args(args(&whole)).output().unwrap());

    let killed_root = dir.path().join("b");
    let mut child = Command::new(binary)
        .args(args(&killed_root))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let runs = results(&killed_root, "off-policy/results");
    let deadline = Instant::now() + Duration::from_secs(120);
    let killed = loop {
        let run = std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path());
        let answered = run.as_ref().map_or(0, |run| {
            std::fs::read_to_string(run.join("predict.partial.jsonl"))
                .map_or(0, |t| t.lines().count())
        });
        if answered >= 3 {
            child.kill().unwrap();
            break run.unwrap();
        }
        assert!(Instant::now() < deadline, "the run never got there");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.wait().unwrap();
    assert!(
        !killed.join("predict.json").exists(),
        "killed before the end"
    );
    let mut resume = args(&killed_root);
    resume.extend(["--resume".to_string(), killed.display().to_string()]);
    assert_ok(&Command::new(binary).args(resume).output().unwrap());
    let reference = only_run(results(&whole, "off-policy/results"));
    assert_eq!(
        json(killed.join("predict.json")),
        json(reference.join("predict.json"))
    );
}
