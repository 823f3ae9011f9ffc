//! Every regime for every memory system on the built-in sample offline, and one regime against
//! a local OpenAI-compatible server the test runs.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common::harness_in;

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

#[test]
fn off_policy_answers_through_an_openai_compatible_server() {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let port = server.server_addr().to_ip().unwrap().port();
    let calls = Arc::new(AtomicUsize::new(0));
    let (serving, counter) = (server.clone(), calls.clone());
    std::thread::spawn(move || {
        for mut request in serving.incoming_requests() {
            let mut body = String::new();
            request.as_reader().read_to_string(&mut body).unwrap();
            let sent: Value = serde_json::from_str(&body).unwrap();
            assert!(sent["messages"].as_array().is_some_and(|m| !m.is_empty()));
            counter.fetch_add(1, Ordering::SeqCst);
            let reply = json!({
                "choices": [{"message": {"role": "assistant", "content": "<think>hmm</think>Biscuit ran 31 races."}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            });
            let header = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
            let _ = request
                .respond(tiny_http::Response::from_string(reply.to_string()).with_header(header));
        }
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
}

/// A slow OpenAI-compatible server whose answer is derived from the question.
fn slow_server(delay_ms: u64) -> u16 {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let port = server.server_addr().to_ip().unwrap().port();
    std::thread::spawn(move || {
        for mut request in server.incoming_requests() {
            let mut body = String::new();
            request.as_reader().read_to_string(&mut body).unwrap();
            let sent: Value = serde_json::from_str(&body).unwrap();
            let question = sent["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default()
                .to_string();
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            let answer: String = question.chars().rev().take(24).collect();
            let reply = json!({"choices": [{"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]});
            let _ = request.respond(tiny_http::Response::from_string(reply.to_string()));
        }
    });
    port
}

fn answer_settings(dir: &Path, port: u16) -> std::path::PathBuf {
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

#[test]
fn a_run_killed_mid_way_resumes_to_the_same_predictions() {
    let port = slow_server(150);
    let dir = tempfile::tempdir().unwrap();
    let settings = answer_settings(dir.path(), port);
    let args = |store: &str, output: &str| -> Vec<String> {
        [
            "off-policy",
            "--baseline",
            "bm25_dialog",
            "--threads",
            "1",
            "--llm-cache",
            "off",
            "--llm",
            settings.to_str().unwrap(),
            "--store",
            store,
            "--output-dir",
            output,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let path = |name: &str| dir.path().join(name).display().to_string();
    // The uninterrupted run.
    let full = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(args(&path("store-a"), &path("runs-a")))
        .output()
        .unwrap();
    assert!(
        full.status.success(),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    // A second run, killed with SIGKILL while it answers.
    let mut child = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(args(&path("store-b"), &path("runs-b")))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let run_dir = |root: &str| {
        dir.path()
            .join(root)
            .join("off-policy/results/domain/Sample/bm25_dialog")
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let killed_run = loop {
        let partial = std::fs::read_dir(run_dir("runs-b"))
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path())
            .filter(|run| {
                std::fs::read_to_string(run.join("predict.partial.jsonl"))
                    .is_ok_and(|t| t.lines().count() >= 3)
            });
        if let Some(run) = partial {
            child.kill().unwrap();
            break run;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run never got going"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.wait().unwrap();
    assert!(
        !killed_run.join("predict.json").exists(),
        "killed before finishing"
    );
    let mut resume = args(&path("store-b"), &path("runs-b"));
    resume.extend(["--resume".to_string(), killed_run.display().to_string()]);
    let resumed = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(&resume)
        .output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let read = |run: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(run.join("predict.json")).unwrap()).unwrap()
    };
    let full_run = std::fs::read_dir(run_dir("runs-a"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(read(&killed_run), read(&full_run));
}

#[test]
fn an_unreachable_model_or_a_skipped_run_stops_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("down.toml");
    // Port 9 (discard) on loopback: nothing listens there.
    std::fs::write(
        &settings,
        "[answer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nmax_retries = 0\ntimeout_secs = 5\n\
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
    assert!(
        stderr.contains("the answer model is not usable"),
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
