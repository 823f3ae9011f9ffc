//! The model as simulated user (one on-policy step) and as judge (NFCats).

use std::process::Command;

use mb_eval::metrics::judged::nfcats_score;

use super::off_policy::usage_calls;
use super::serving::{counting_proxy, settings, shared_server, CAP};
use crate::common::{assert_ok, harness_in, json, only_run};

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
    // after its score marker; none is a counted fallback whose score stays without a number, as
    // upstream leaves it, and summaries count it 0).
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
            expected.map(u64::from),
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
