//! Off-policy through the real model: all eight systems with the server's token counts, a
//! recorded run replayed without the server, a server killed mid-run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::serving::{counting_proxy, settings, shared_server, CAP};
use crate::common::{assert_ok, harness_in, in_dir, json, only_run};

/// The run directory of each system under a results directory (`…/Sample`), by system.
fn system_runs(results: &Path) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(results)
        .unwrap()
        .map(|entry| {
            let system = entry.unwrap().path();
            let name = system.file_name().unwrap().to_string_lossy().to_string();
            (name, only_run(system))
        })
        .collect();
    found.sort();
    found
}

/// Sum of the tokens `timing.json` gives the cases of a run, memory processing and prediction.
fn case_tokens(run: &Path) -> (f64, f64) {
    let timing = json(run.join("timing.json"));
    let mut sums = (0.0, 0.0);
    for case in timing.as_array().unwrap() {
        let seconds = &case["seconds"];
        let field = |name: &str| seconds[name].as_f64().unwrap_or(0.0);
        sums.0 += field("input_tokens_memory") + field("input_tokens_predict");
        sums.1 += field("output_tokens_memory") + field("output_tokens_predict");
    }
    sums
}

/// The model usage a summary reports, summed over roles and operations: (calls, estimated).
pub(super) fn usage_calls(summary: &Value) -> (u64, u64) {
    let mut calls = (0, 0);
    for operation in summary["timing"]["model_usage"].as_array().unwrap() {
        calls.0 += operation["calls"].as_u64().unwrap();
        calls.1 += operation["estimated_token_calls"].as_u64().unwrap();
    }
    calls
}

/// `off-policy` on Sample-Stories' first two cases with `baseline` and the settings `llm`,
/// then `extra`.
fn on_stories<'a>(baseline: &'a str, llm: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "off-policy",
        "--dataset-type",
        "single",
        "--set-name",
        "Sample-Stories",
        "--baseline",
        baseline,
        "--limit",
        "2",
        "--llm",
        llm.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn every_system_answers_through_the_real_model_with_the_servers_token_counts() {
    let Some(server) = shared_server() else {
        return;
    };
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let (url, served) = counting_proxy(server);
    let llm = settings(dir.path(), "llm.toml", Some(&url), CAP).unwrap();
    let out = harness_in(
        dir.path(),
        &on_stories("all", &llm, &["--llm-cache", "off"]),
    );
    assert_ok(&out);
    let runs = system_runs(
        &dir.path()
            .join("runs/off-policy/results/single/Sample-Stories"),
    );
    assert_eq!(runs.len(), 8, "{runs:?}");
    let (mut input, mut output, mut calls, mut fallbacks) = (0.0, 0.0, 0, 0.0);
    for (system, run) in &runs {
        let summary = json(run.join("summary.json"));
        let timing = &summary["timing"];
        assert_eq!(timing["cases"], 2, "{system}: --limit 2");
        assert!(
            timing["tokens_per_case"].as_f64().unwrap() > 0.0,
            "{system}: {timing}"
        );
        for case in json(run.join("timing.json")).as_array().unwrap() {
            assert!(
                case["seconds"]["input_tokens_predict"].as_f64().unwrap() > 0.0,
                "{system} answered with the model: {case}"
            );
        }
        let (run_calls, estimated) = usage_calls(&summary);
        assert_eq!(
            estimated, 0,
            "{system}: the server reported every call's usage"
        );
        let (run_input, run_output) = case_tokens(run);
        input += run_input;
        output += run_output;
        calls += run_calls;
        let run_fallbacks = &timing["fallbacks"];
        fallbacks += run_fallbacks["memory"].as_f64().unwrap()
            + run_fallbacks["prediction"].as_f64().unwrap();
    }
    let served = served.lock().unwrap().clone();
    eprintln!(
        "eight systems, two Sample-Stories cases each, in {:?}: {} calls, {} tokens in, {} out, {fallbacks} fallbacks",
        started.elapsed(),
        served.calls,
        served.input_tokens,
        served.output_tokens
    );
    assert_eq!(calls, served.calls, "every model call the server answered");
    assert!(
        (input - served.input_tokens as f64).abs() < 0.5
            && (output - served.output_tokens as f64).abs() < 0.5,
        "cases' tokens {input} in, {output} out; the server's {served:?}"
    );
    assert!(
        fallbacks > 0.0,
        "{CAP}-token JSON from a 135M model ends in counted fallbacks"
    );
}

#[test]
fn a_recorded_run_replays_identically_without_the_server() {
    let Some(server) = shared_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (url, served) = counting_proxy(server);
    let live = settings(dir.path(), "live.toml", Some(&url), CAP).unwrap();
    // Port 9 (discard) on loopback: nothing listens there.
    let down = settings(dir.path(), "down.toml", Some("http://127.0.0.1:9/v1"), CAP).unwrap();
    let run = |llm: &Path, cache: &str, output: &str| {
        let mut args = in_dir(
            dir.path(),
            &on_stories("mem0", llm, &["--llm-cache", cache]),
        );
        let at = args.iter().position(|a| a == "--output-dir").unwrap();
        args[at + 1] = dir.path().join(output).display().to_string();
        let out = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
            .args(&args)
            .output()
            .unwrap();
        assert_ok(&out);
        only_run(
            dir.path()
                .join(output)
                .join("off-policy/results/single/Sample-Stories/mem0"),
        )
    };
    let recorded = run(&live, "record", "recorded");
    let calls = served.lock().unwrap().calls;
    assert!(
        calls > 2,
        "memorizing and answering called the model: {calls}"
    );
    let replayed = run(&down, "replay", "replayed");
    assert_eq!(
        served.lock().unwrap().calls,
        calls,
        "the replay sent nothing"
    );
    assert_eq!(
        json(recorded.join("predict.json")),
        json(replayed.join("predict.json"))
    );
    let scores = |run: &Path| {
        let mut summary = json(run.join("summary.json"));
        summary.as_object_mut().unwrap().remove("timing");
        summary
    };
    assert_eq!(scores(&recorded), scores(&replayed));
    let replay = json(replayed.join("summary.json"));
    for operation in replay["timing"]["model_usage"].as_array().unwrap() {
        assert_eq!(operation["calls"], operation["replayed"], "{operation}");
    }
}

/// The pid of `parent`'s child running the server launcher, once it exists.
fn launcher_child(parent: u32, limit: Duration) -> Option<u32> {
    let start = Instant::now();
    while start.elapsed() < limit {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if ppid == Some(parent) && String::from_utf8_lossy(&cmdline).contains("llm_server.py") {
                return Some(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn a_server_killed_mid_run_stops_it_and_resume_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(llm) = settings(dir.path(), "own.toml", None, CAP) else {
        return;
    };
    let args = in_dir(dir.path(), &on_stories("mem0", &llm, &[]));
    let harness = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let server = launcher_child(harness.id(), Duration::from_secs(60)).expect("a server started");
    // Killed once the run has begun (its directory exists after the preflight check).
    let results = dir
        .path()
        .join("runs/off-policy/results/single/Sample-Stories/mem0");
    let begun = Instant::now();
    while std::fs::read_dir(&results).map_or(true, |mut d| d.next().is_none()) {
        assert!(begun.elapsed() < Duration::from_secs(120), "the run began");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(1));
    let killed = Command::new("kill")
        .args(["-KILL", &server.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = harness.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the run stopped");
    assert!(stderr.contains("stopped while in use"), "{stderr}");
    assert!(
        stderr.lines().count() <= 3,
        "a readable error, no flood: {stderr}"
    );

    let run = only_run(results.clone());
    let mut resumed = args.clone();
    resumed.extend(["--resume".to_string(), run.display().to_string()]);
    let out = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(&resumed)
        .output()
        .unwrap();
    assert_ok(&out);
    assert_eq!(json(run.join("summary.json"))["timing"]["cases"], 2);
}
