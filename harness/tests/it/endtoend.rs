//! Every regime for every memory system on the built-in sample offline, and one regime against
//! a local OpenAI-compatible server the test runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common::{assert_ok, chat_server, harness_in};

#[test]
fn every_regime_runs_every_system_offline() {
    let dir = tempfile::tempdir().unwrap();
    for regime in [
        vec!["off-policy", "--baseline", "all"],
        vec!["train-performance", "--baseline", "all"],
        vec![
            "stepwise-off-policy",
            "--baseline",
            "all",
            "--batch-size",
            "8",
        ],
        vec![
            "on-policy",
            "--baseline",
            "all",
            "--step",
            "1",
            "--batch-size",
            "4",
        ],
    ] {
        let out = harness_in(dir.path(), &regime);
        assert!(
            out.status.success(),
            "{regime:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let table = String::from_utf8(out.stdout).unwrap();
        for system in [
            "bm25_message",
            "bm25_dialog",
            "embedder_message",
            "embedder_dialog",
            "a_mem",
            "mem0",
            "memoryos",
        ] {
            assert!(
                table.contains(system),
                "{regime:?} misses {system}: {table}"
            );
        }
        assert_eq!(
            table.contains("wo_memory"),
            regime[0] == "off-policy" || regime[0] == "train-performance",
            "{regime:?}"
        );
    }
}

/// RAPTOR, beyond upstream so not in `all`: its tree built over the set's dialogs (and the
/// sample conversation), then rebuilt as stepwise and on-policy runs add dialogs.
#[test]
fn raptor_runs_in_every_regime_offline() {
    let dir = tempfile::tempdir().unwrap();
    for regime in [
        vec!["off-policy"],
        vec!["train-performance"],
        vec!["stepwise-off-policy", "--batch-size", "8"],
        vec!["on-policy", "--step", "1", "--batch-size", "4"],
        vec!["action-feedback", "--action", "like"],
    ] {
        let mut args = regime.clone();
        args.extend(["--baseline", "raptor"]);
        let out = harness_in(dir.path(), &args);
        assert_ok(&out);
        let table = String::from_utf8(out.stdout).unwrap();
        assert!(table.contains("raptor"), "{regime:?}: {table}");
    }
}

#[test]
fn off_policy_answers_through_an_openai_compatible_server() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let port = chat_server(move |sent| {
        assert!(sent["messages"].as_array().is_some_and(|m| !m.is_empty()));
        counter.fetch_add(1, Ordering::SeqCst);
        json!({
            "choices": [{"message": {"role": "assistant", "content": "<think>hmm</think>Biscuit ran 31 races."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("llm.toml");
    std::fs::write(
        &settings,
        format!(
            "reasks = 1\n[answer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"test-model\"\n\
             [memory]\nprovider = \"offline\"\n[simulator]\nprovider = \"offline\"\n[judge]\nprovider = \"offline\"\n"
        ),
    )
    .unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--baseline",
            "bm25_message",
            "--llm",
            settings.to_str().unwrap(),
            "--llm-cache",
            "off",
        ],
    );
    assert_ok(&out);
    // The check that the model answers at all, then one answer per test question of the
    // sample, from the server, thinking stripped.
    assert_eq!(calls.load(Ordering::SeqCst), 1 + 10);
    let runs = dir
        .path()
        .join("runs/off-policy/results/domain/Sample/bm25_message");
    let run = std::fs::read_dir(runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let predictions: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("predict.json")).unwrap()).unwrap();
    for prediction in predictions.as_array().unwrap() {
        assert_eq!(prediction["response"], "Biscuit ran 31 races.");
    }
    // Each case's model tokens are its own answer's, as the server counted them.
    let timing: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("timing.json")).unwrap()).unwrap();
    for case in timing.as_array().unwrap() {
        assert_eq!(case["seconds"]["input_tokens_predict"], 10.0, "{case}");
        assert_eq!(case["seconds"]["output_tokens_predict"], 5.0, "{case}");
        assert_eq!(case["seconds"]["input_tokens_memory"], 0.0, "{case}");
    }
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["timing"]["tokens_per_case"], 15.0);
}

#[test]
fn an_unreachable_model_or_a_skipped_run_stops_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("down.toml");
    // Port 9 (discard) on loopback: nothing listens there.
    std::fs::write(
        &settings,
        "[answer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
         [memory]\nprovider = \"offline\"\n[simulator]\nprovider = \"offline\"\n[judge]\nprovider = \"offline\"\n",
    )
    .unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--baseline",
            "bm25_message",
            "--llm",
            settings.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    // With the default retries (six, about a minute of backoff), yet at once.
    assert!(
        stderr.contains("the answer model at http://127.0.0.1:9/v1 is unreachable"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("runs/off-policy").exists(),
        "no run directory before the check"
    );

    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--dataset-type",
            "domain",
            "--set-name",
            "Open-Domain",
            "--baseline",
            "mem0",
        ],
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        !out.status.success()
            && stderr.contains("upstream does not run mem0")
            && stderr.contains("--force"),
        "{stderr}"
    );
}
