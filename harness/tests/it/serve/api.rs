//! The server's API as the page uses it: choices from the registry and catalog, a launched run
//! followed to its end and browsed item by item, steps and dialogs, launches outside the
//! choices refused, and a stopped job resumed to a whole run, its key never written.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{offline_launch, query, Served};
use crate::common::last_message;

#[test]
fn a_launched_run_is_followed_and_browsed() {
    let served = Served::start(|_| {}, &[], &[]);
    let (_, choices) = served.get("/api/choices");
    let systems: Vec<&str> = choices["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let registry: Vec<&str> = mb_baselines::registry::REGISTRY
        .iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(systems, registry);
    assert!(choices["dataset_types"]["domain"]
        .as_array()
        .unwrap()
        .contains(&json!("Sample")));

    let id = served.launch(&offline_launch("bm25_message", 2));
    // The event stream runs until the job has ended.
    let events = served.text(&format!("/api/jobs/{id}/events"));
    for needed in [
        "event: run_dir",
        "event: progress",
        "event: log",
        "\"state\":\"exited\"",
    ] {
        assert!(events.contains(needed), "{needed} missing from {events}");
    }
    assert!(events.contains("\"unit\":\"cases\""), "{events}");
    let job = served.ended(&id);
    assert_eq!(job["state"], "exited", "{}", served.job_log(&id));
    let run = job["run_dirs"][0].as_str().unwrap().to_string();
    assert!(run.starts_with("off-policy/results/domain/Sample/bm25_message/start_at_"));

    let (_, runs) = served.get("/api/runs");
    let listed = &runs["runs"][0];
    assert_eq!(listed["run"], run.as_str());
    assert_eq!(listed["complete"], true);
    assert_eq!(listed["cases"], 4);
    assert!(listed["score"].is_f64());

    let run_query = query(&run);
    let (status, detail) = served.get(&format!("/api/run?run={run_query}"));
    assert_eq!(status, 200);
    assert_eq!(detail["config"]["memory_system"], "bm25_message");
    assert!(detail["summary"]["summary"]["average"].is_f64());
    let (_, items) = served.get(&format!("/api/run/items?run={run_query}"));
    assert_eq!(items["total"], 4);
    assert!(items["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| !i["score"].is_null()));

    let (status, item) = served.get(&format!("/api/run/item?run={run_query}&index=0"));
    assert_eq!(status, 200, "{item}");
    let predictions = super::super::common::json(served.runs().join(&run).join("predict.json"));
    assert_eq!(item["prompt"], last_message(&predictions[0]));
    assert_eq!(item["response"], predictions[0]["response"]);
    let retrieved = item["retrieved"]
        .as_array()
        .expect("retrieved memories recorded");
    assert!(!retrieved.is_empty());
    // Each retrieved memory is in the assembled prompt.
    let prompt = item["prompt"].as_str().unwrap();
    assert!(retrieved
        .iter()
        .all(|m| prompt.contains(m["text"].as_str().unwrap())));
    assert!(item["metrics"].is_object());
    assert!(
        item["question"].as_str().is_some_and(|q| !q.is_empty()),
        "{item}"
    );
    assert!(item["reference"].is_object(), "{item}");
    assert!(item["timing"].is_object());

    // An off-policy run's dialogs are its set's training dialogs, with their feedback.
    let (_, dialogs) = served.get(&format!("/api/run/dialogs?run={run_query}"));
    assert!(dialogs["total"].as_u64().unwrap() >= 1, "{dialogs}");
    assert!(dialogs["dialogs"][0]["dialog"]
        .as_array()
        .is_some_and(|d| !d.is_empty()));

    let (status, report) = served.get("/api/report");
    assert_eq!(status, 200);
    let html = report["html"].as_str().unwrap();
    assert!(html.contains("<svg") && html.contains("bm25_message"));
    assert!(
        !html.contains("style="),
        "the report body obeys the page's CSP"
    );
}

#[test]
fn a_stepwise_run_shows_its_steps_and_their_dialogs() {
    let served = Served::start(|_| {}, &[], &[]);
    let mut launch = offline_launch("bm25_message", 4);
    launch["regime"] = json!("stepwise-off-policy");
    launch["extra"] = json!({"batch-size": 2});
    let id = served.launch(&launch);
    let job = served.ended(&id);
    assert_eq!(job["state"], "exited", "{}", served.job_log(&id));
    let run = query(job["run_dirs"][0].as_str().unwrap());
    let (_, detail) = served.get(&format!("/api/run?run={run}"));
    let steps: Vec<&str> = detail["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["begin", "[0,2)", "[2,4)"]);
    assert!(detail["steps"][2]["summary"]["summary"]["average"].is_f64());
    let step = query("[0,2)");
    let (_, items) = served.get(&format!("/api/run/items?run={run}&step={step}"));
    assert_eq!(items["total"], 8);
    let (status, item) = served.get(&format!("/api/run/item?run={run}&step={step}&index=7"));
    assert_eq!(status, 200);
    assert!(item["prompt"].as_str().is_some_and(|p| !p.is_empty()));
    let (_, dialogs) = served.get(&format!("/api/run/dialogs?run={run}&step={step}"));
    assert_eq!(dialogs["total"], 2, "{dialogs}");
}

#[test]
fn launches_outside_the_choices_are_refused_and_start_nothing() {
    let served = Served::start(|_| {}, &[], &[]);
    let (_, choices) = served.get("/api/choices");
    let skipped = choices["systems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skips"].as_array().is_some_and(|k| !k.is_empty()))
        .expect("a system the registry skips somewhere");
    let skipped_set = skipped["skips"][0]["set"].as_str().unwrap();
    let single = |set: &str| {
        choices["dataset_types"]["single"]
            .as_array()
            .unwrap()
            .contains(&json!(set))
    };
    let skipped_type = if single(skipped_set) {
        "single"
    } else {
        "domain"
    };
    let base = offline_launch("bm25_message", 2);
    let cases: Vec<(Value, Option<&str>)> = vec![
        (json!({"regime": "off-policy; rm -rf x"}), Some("regime")),
        (json!({"dataset_type": "x"}), Some("dataset_type")),
        (json!({"set_name": "Sample; rm -rf x"}), Some("set_name")),
        (json!({"baseline": "../bm25_message"}), Some("baseline")),
        (json!({"llm": "../../etc/passwd"}), Some("llm")),
        (json!({"llm": "/etc/passwd"}), Some("llm")),
        (json!({"embedder": "/tmp"}), Some("embedder")),
        (json!({"threads": 0}), Some("threads")),
        (json!({"threads": 257}), Some("threads")),
        (json!({"retrieve_k": 0}), Some("retrieve_k")),
        (json!({"limit": 0}), Some("limit")),
        (json!({"extra": {"batch-size": 2}}), Some("batch-size")),
        (
            json!({"extra": {"batch-size": 0}, "regime": "stepwise-off-policy"}),
            Some("batch-size"),
        ),
        (
            json!({"extra": {"batch-size": "2; ls"}, "regime": "stepwise-off-policy"}),
            Some("batch-size"),
        ),
        (json!({"keys": {"PATH": "/tmp"}}), Some("PATH")),
        (json!({"output_dir": "/"}), None),
        (
            json!({"baseline": "wo_memory", "regime": "on-policy"}),
            Some("baseline"),
        ),
        (
            json!({"baseline": skipped["name"], "set_name": skipped_set, "dataset_type": skipped_type}),
            Some("force"),
        ),
    ];
    for (patch, field) in cases {
        let mut body = base.clone();
        for (key, value) in patch.as_object().unwrap() {
            body[key] = value.clone();
        }
        let (status, reply) = served.post("/api/jobs", &body);
        assert_eq!(status, 422, "{patch}: {reply}");
        assert!(
            reply["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{reply}"
        );
        if let Some(field) = field {
            assert_eq!(reply["field"], field, "{patch}: {reply}");
        }
    }
    let (_, jobs) = served.get("/api/jobs");
    assert_eq!(jobs, json!([]));
    let (_, runs) = served.get("/api/runs");
    assert_eq!(runs["runs"], json!([]));
}

/// Lines of a file (0 when it is missing).
fn lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[test]
fn a_stopped_job_resumes_to_a_whole_run_and_its_key_is_never_written() {
    const KEY: &str = "sk-serve-test-5f2b9c0e";
    let port = crate::resume::slow_server(300);
    let served = Served::start(
        |dir| {
            // Settings the server offers (found under its working directory) naming a key.
            let llm = dir.join("configs/llm");
            std::fs::create_dir_all(&llm).unwrap();
            std::fs::write(
                llm.join("slow.toml"),
                format!(
                    "# A slow answer model.\nreasks = 0\n[answer]\nprovider = \"openai\"\n\
                     base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"slow\"\napi_key_env = \"MB_TEST_SLOW_KEY\"\n"
                ),
            )
            .unwrap();
        },
        &[],
        &[],
    );
    let (_, choices) = served.get("/api/choices");
    let slow = choices["llms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "slow")
        .unwrap();
    assert_eq!(slow["key_envs"], json!(["MB_TEST_SLOW_KEY"]));
    let mut launch = offline_launch("bm25_dialog", 10);
    launch["llm"] = json!("slow");
    launch["threads"] = json!(1);
    launch["keys"] = json!({"MB_TEST_SLOW_KEY": KEY});
    let id = served.launch(&launch);
    let deadline = Instant::now() + Duration::from_secs(120);
    let run = loop {
        let (_, job) = served.get(&format!("/api/jobs/{id}"));
        let run = job["run_dirs"][0].as_str().map(|r| served.runs().join(r));
        if let Some(run) = run.filter(|r| lines(&r.join("predict.partial.jsonl")) >= 2) {
            break run;
        }
        assert!(
            Instant::now() < deadline,
            "the run never got there: {}",
            served.job_log(&id)
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // The key reached the run through its environment.
    let record =
        super::super::common::json(served.runs().join(".serve/jobs").join(&id).join("job.json"));
    let pid = record["pid"].as_u64().unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    assert!(environ.windows(KEY.len()).any(|w| w == KEY.as_bytes()));

    let (status, _) = served.post(&format!("/api/jobs/{id}/stop"), &json!({}));
    assert_eq!(status, 202);
    let stopped = served.ended(&id);
    assert_eq!(stopped["state"], "stopped");
    assert_eq!(stopped["resumable"], true);
    assert!(
        served.job_log(&id).contains("--resume"),
        "{}",
        served.job_log(&id)
    );
    // SAFETY: kill with signal 0 checks only whether the group exists.
    let group_alive = unsafe { libc::kill(-(pid as libc::pid_t), 0) } == 0;
    assert!(!group_alive, "the job's process group outlived the stop");
    let answered = lines(&run.join("predict.partial.jsonl"));
    assert!(answered < 10, "{answered} cases before the stop");
    assert!(!run.join("predict.json").exists());

    let (status, resumed) = served.post(&format!("/api/jobs/{id}/resume"), &json!({}));
    assert_eq!(status, 201, "{resumed}");
    let again = resumed["id"].as_str().unwrap();
    let job = served.ended(again);
    assert_eq!(job["state"], "exited", "{}", served.job_log(again));
    assert_eq!(
        served.runs().join(job["run_dirs"][0].as_str().unwrap()),
        run
    );
    let predictions = super::super::common::json(run.join("predict.json"));
    let predictions = predictions.as_array().unwrap();
    assert_eq!(predictions.len(), 10);
    for prediction in predictions {
        // The slow model's answer: the prompt's last 24 characters reversed.
        let prompt = last_message(prediction);
        let expected: String = prompt.chars().rev().take(24).collect();
        assert_eq!(prediction["response"], expected.as_str());
    }

    let everything = [
        served.text("/api/jobs"),
        served.text("/api/runs"),
        served.text(&format!("/api/jobs/{id}/events")),
        served.text(&format!(
            "/api/run?run={}",
            query(job["run_dirs"][0].as_str().unwrap())
        )),
    ];
    assert!(everything.iter().all(|body| !body.contains(KEY)));
    let written = crate::secrets::files_containing(served.dir.path(), KEY.as_bytes());
    assert_eq!(written, Vec::<String>::new());
}
