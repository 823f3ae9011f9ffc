//! Every model-backed path through a real model: llama.cpp's server with SmolLM2-135M, started
//! as `--llm local` starts it, and the shipped `configs/llm/local.toml` with small output caps.
//! One server serves the tests that do not stop it, behind a counting proxy per test: the
//! tokens the harness records must be the ones the server reported. A 135M model's answers say
//! nothing about memory; these tests check the plumbing, the accounting and that messy output
//! ends in counted fallbacks. They skip, saying so, when `scripts/setup.sh` has not installed
//! xllamacpp and the model.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mb_llm::{LocalServer, ServerSettings};
use serde_json::Value;

use mb_datasets::metrics::judged::nfcats_score;

use crate::common::{assert_ok, chat_server_with_status, harness_in, in_dir, json, only_run};

/// Output tokens per request of every role: enough for a short answer or a judge's score,
/// too few for most memory operations' JSON (their fallbacks are part of what is tested).
const CAP: u32 = 24;

/// The request the harness sends each role before any work (not a cost of any case).
const PREFLIGHT: &str = "Reply with the word OK.";

fn checkout(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(path)
}

/// The shipped local settings with absolute paths, every role's `max_tokens` set to `cap`,
/// and `base_url = "server"` replaced by `base_url` (`None`: keep the `[server]` section, so
/// the harness starts its own server). `None` after saying why when setup has not installed
/// the server and model.
fn settings(dir: &Path, name: &str, base_url: Option<&str>, cap: u32) -> Option<PathBuf> {
    let defaults = ServerSettings::default();
    let python = checkout(&defaults.python.to_string_lossy());
    let model = checkout(&defaults.model.to_string_lossy());
    let importable = Command::new(&python)
        .args(["-c", "import xllamacpp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !importable || !model.is_file() {
        eprintln!(
            "skipping a real-model test: {} has no xllamacpp or {} is missing (run bash scripts/setup.sh)",
            python.display(),
            model.display()
        );
        return None;
    }
    let local = std::fs::read_to_string(checkout("configs/llm/local.toml")).unwrap();
    let mut text = String::new();
    let mut in_server = false;
    for line in local.lines() {
        if line.starts_with('[') {
            in_server = line.trim() == "[server]";
            if in_server && base_url.is_some() {
                continue;
            }
        }
        if in_server && base_url.is_some() {
            continue;
        }
        let key = line.split('=').next().unwrap_or("").trim();
        let absolute = |path: &Path| format!("{key} = {:?}", path.display().to_string());
        let line = match key {
            "model" if in_server => absolute(&model),
            "python" => absolute(&python),
            "launcher" => absolute(&checkout("scripts/llm_server.py")),
            "startup_timeout_secs" => "startup_timeout_secs = 120".to_string(),
            "max_tokens" => format!("max_tokens = {cap}"),
            "base_url" => match base_url {
                Some(url) => format!("base_url = {url:?}"),
                None => line.to_string(),
            },
            _ => line.to_string(),
        };
        text.push_str(&line);
        text.push('\n');
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    Some(path)
}

/// The server the tests share: its port, or `None` when setup has not installed it. Started on
/// a thread that lives as long as the test process (the server stops with the thread that
/// started it, and with the process).
fn shared_server() -> Option<u16> {
    static PORT: OnceLock<Option<u16>> = OnceLock::new();
    *PORT.get_or_init(|| {
        let probe = tempfile::tempdir().unwrap();
        settings(probe.path(), "probe.toml", Some("unused"), CAP)?;
        let (sent, port) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let server = LocalServer::start(&ServerSettings {
                model: checkout(&ServerSettings::default().model.to_string_lossy()),
                python: checkout(&ServerSettings::default().python.to_string_lossy()),
                launcher: checkout("scripts/llm_server.py"),
                startup_timeout_secs: 120.0,
                ..ServerSettings::default()
            })
            .unwrap();
            sent.send(server.port()).unwrap();
            loop {
                std::thread::park();
            }
        });
        Some(port.recv().expect("the shared server started"))
    })
}

/// What a proxy passed on: the calls, the tokens the server reported, and each exchange's
/// request text (its messages' contents joined) and reply.
#[derive(Debug, Default, Clone, PartialEq)]
struct Served {
    calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    exchanges: Vec<(String, String)>,
}

/// A proxy in front of the shared server that adds up the usage of every response (the
/// harness's preflight requests aside); its base URL and tally.
fn counting_proxy(server: u16) -> (String, Arc<Mutex<Served>>) {
    let served = Arc::new(Mutex::new(Served::default()));
    let tally = served.clone();
    let port = chat_server_with_status(move |sent| {
        let (status, reply) = forward(server, sent).expect("the shared server answers");
        let preflight = sent["messages"]
            .as_array()
            .and_then(|m| m.last())
            .is_some_and(|m| m["content"] == PREFLIGHT);
        if !preflight {
            let usage = &reply["usage"];
            let mut served = tally.lock().unwrap();
            served.calls += 1;
            served.input_tokens += usage["prompt_tokens"].as_u64().unwrap_or(0);
            served.output_tokens += usage["completion_tokens"].as_u64().unwrap_or(0);
            let asked = sent["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let replied = reply["choices"][0]["message"]["content"].as_str();
            served
                .exchanges
                .push((asked, replied.unwrap_or_default().to_string()));
        }
        (status, reply)
    });
    (format!("http://127.0.0.1:{port}/v1"), served)
}

/// Posts `body` to the server's chat completions; its status and JSON reply.
fn forward(port: u16, body: &Value) -> std::io::Result<(u16, Value)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    let text = body.to_string();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let response = String::from_utf8_lossy(&response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(502);
    let body = if head.to_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok((status, serde_json::from_str(&body).unwrap_or(Value::Null)))
}

/// The payload of a chunked HTTP body.
fn dechunk(mut body: &str) -> String {
    let mut payload = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        payload.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    payload
}

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
fn usage_calls(summary: &Value) -> (u64, u64) {
    let mut calls = (0, 0);
    for operation in summary["timing"]["model_usage"].as_array().unwrap() {
        calls.0 += operation["calls"].as_u64().unwrap();
        calls.1 += operation["estimated_token_calls"].as_u64().unwrap();
    }
    calls
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
        &[
            "off-policy",
            "--dataset-type",
            "single",
            "--set-name",
            "Sample-Stories",
            "--baseline",
            "all",
            "--limit",
            "2",
            "--llm",
            llm.to_str().unwrap(),
            "--llm-cache",
            "off",
        ],
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
            &[
                "off-policy",
                "--dataset-type",
                "single",
                "--set-name",
                "Sample-Stories",
                "--baseline",
                "mem0",
                "--limit",
                "1",
                "--llm",
                llm.to_str().unwrap(),
                "--llm-cache",
                cache,
            ],
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
        "memorising and answering called the model: {calls}"
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
    let args = in_dir(
        dir.path(),
        &[
            "off-policy",
            "--dataset-type",
            "single",
            "--set-name",
            "Sample-Stories",
            "--baseline",
            "mem0",
            "--limit",
            "2",
            "--llm",
            llm.to_str().unwrap(),
        ],
    );
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

#[test]
fn one_on_policy_step_with_the_model_as_simulator() {
    let Some(server) = shared_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (url, served) = counting_proxy(server);
    let llm = settings(dir.path(), "llm.toml", Some(&url), CAP).unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "on-policy",
            "--dataset-type",
            "single",
            "--set-name",
            "Sample-Stories",
            "--baseline",
            "bm25_message",
            "--limit",
            "2",
            "--step",
            "1",
            "--batch-size",
            "2",
            "--llm",
            llm.to_str().unwrap(),
        ],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/on-policy/results/single/Sample-Stories/bm25_message"),
    );
    let dialogs = json(run.join("step_0/train_dialogs.json"));
    let dialogs = dialogs.as_array().unwrap();
    assert_eq!(dialogs.len(), 2, "{dialogs:?}");
    for dialog in dialogs {
        let messages = dialog["dialog"].as_array().unwrap();
        let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(roles[..2], ["user", "assistant"], "{dialog}");
        // The simulated user either ended the dialog or gave feedback the model wrote.
        let verdicts = dialog["implicit_feedback"].as_array().unwrap();
        let ended = verdicts.last().unwrap()["terminated"] == true;
        let last = messages.last().unwrap();
        assert!(
            (ended && roles.len() == 2)
                || (!ended && last["role"] == "user" && last["content"] != ""),
            "{dialog}"
        );
    }
    let summary = json(run.join("step_0/summary.json"));
    let (calls, estimated) = usage_calls(&summary);
    let simulated: u64 = summary["timing"]["model_usage"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["role"] == "simulator")
        .map(|op| op["calls"].as_u64().unwrap())
        .sum();
    assert!(simulated >= 2, "the model simulated the user: {summary}");
    assert_eq!(estimated, 0);
    assert_eq!(calls, served.lock().unwrap().calls, "{summary}");
}

#[test]
fn a_judge_metric_parses_real_judge_replies() {
    let Some(server) = shared_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("test.csv");
    let questions = [
        "Why do cats purr?",
        "How does a refrigerator keep food cold?",
        "What makes bread rise?",
        "Why is the sky blue?",
        "How do vaccines train the immune system?",
        "Why do onions make people cry?",
        "How do bees decide where to build a hive?",
        "What causes the seasons?",
        "Why do some metals rust and others not?",
        "How does a bicycle stay upright?",
    ];
    let mut text = String::from("annotated_by,category,question\n");
    for question in questions {
        text.push_str(&format!("a,REASON,\"{question}\"\n"));
    }
    std::fs::write(&csv, text).unwrap();
    let data = dir.path().join("data");
    let out = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(["import", "--out", data.to_str().unwrap()])
        .args(["--nfcats", csv.to_str().unwrap()])
        .output()
        .unwrap();
    assert_ok(&out);
    let (url, served) = counting_proxy(server);
    let llm = settings(dir.path(), "llm.toml", Some(&url), CAP).unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--data",
            data.to_str().unwrap(),
            "--dataset-type",
            "single",
            "--set-name",
            "NFCats",
            "--baseline",
            "wo_memory",
            "--llm",
            llm.to_str().unwrap(),
        ],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/off-policy/results/single/NFCats/wo_memory"),
    );
    // Each case's score is what the judge's last reply to it says (NFCats reads the first 1-10
    // after its score marker; none is a counted fallback scored 0).
    let predictions = json(run.join("predict.json"));
    let details = json(run.join("evaluate_details.json"));
    let served = served.lock().unwrap().clone();
    let mut unusable = 0;
    for (prediction, detail) in predictions
        .as_array()
        .unwrap()
        .iter()
        .zip(details.as_array().unwrap())
    {
        assert_eq!(prediction["test_idx"], detail["test_idx"]);
        let answer = prediction["response"].as_str().unwrap();
        let replies: Vec<&String> = served
            .exchanges
            .iter()
            .filter(|(asked, _)| {
                asked.contains("###Score of the answer:") && asked.contains(answer)
            })
            .map(|(_, replied)| replied)
            .collect();
        let last = replies.last().expect("the model judged the answer");
        let expected = nfcats_score(last);
        if expected.is_none() {
            unusable += 1;
        }
        eprintln!("judge replied {last:?}: {expected:?}");
        assert_eq!(
            detail["metrics"]["score"].as_u64(),
            Some(u64::from(expected.unwrap_or(0))),
            "{detail}"
        );
    }
    let summary = json(run.join("summary.json"));
    let fallbacks = &summary["timing"]["fallbacks"]["by_operation"];
    assert_eq!(
        fallbacks["judge/judge_rubric"].as_u64().unwrap_or(0),
        unusable,
        "{fallbacks}"
    );
}
