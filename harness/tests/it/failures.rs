//! Answers that fail: a prompt overflowing the model's context is sent again with fewer
//! memories, a question nothing answers gets upstream's error answer, and the run goes on,
//! counting them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::load;
use mb_datasets::sample::{sample_source, SAMPLE_SET};
use serde_json::json;

use crate::common::{assert_ok, chat_server_with_status, harness_in, json as read, only_run};

/// The test model's context, in characters of the last message.
const CONTEXT: usize = 1200;
const ERROR_RESPONSE: &str = "Error: Unable to generate response.";

/// A server whose context holds `context` characters, that overflows on any prompt holding
/// `refused` (every prompt when it is empty), and keeps every prompt it was sent.
fn small_model(context: usize, refused: Option<String>) -> (u16, Arc<Mutex<Vec<String>>>) {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let kept = prompts.clone();
    let port = chat_server_with_status(move |sent| {
        let prompt = sent["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        kept.lock().unwrap().push(prompt.clone());
        let ping = prompt == "Reply with the word OK.";
        let overflows = prompt.chars().count() > context
            || refused
                .as_ref()
                .is_some_and(|r| prompt.contains(r.as_str()));
        if overflows && !ping {
            let message = format!(
                "This model's maximum context length is {context} tokens. However, you requested more."
            );
            return (
                400,
                json!({"error": {"message": message, "type": "BadRequestError"}}),
            );
        }
        (
            200,
            json!({"choices": [{"message": {"role": "assistant", "content": "a short answer"}, "finish_reason": "stop"}]}),
        )
    });
    (port, prompts)
}

fn settings(dir: &Path, port: u16) -> PathBuf {
    let path = dir.join("llm.toml");
    std::fs::write(
        &path,
        format!(
            "reasks = 0\n[answer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"small\"\n\
             [memory]\nprovider = \"offline\"\n[simulator]\nprovider = \"offline\"\n[judge]\nprovider = \"offline\"\n"
        ),
    )
    .unwrap();
    path
}

/// The question of the sample's first LoCoMo test case.
fn first_test_question() -> String {
    let datasets = load(
        &sample_source().unwrap(),
        &Catalog::builtin().unwrap(),
        DatasetType::Domain,
        SAMPLE_SET,
    )
    .unwrap();
    let locomo = datasets
        .iter()
        .find(|d| d.name() == "Sample-Locomo")
        .unwrap();
    locomo.test[0]
        .input
        .initial_messages()
        .pop()
        .unwrap()
        .content
}

fn off_policy(dir: &Path, port: u16) -> std::process::Output {
    let llm = settings(dir, port);
    harness_in(
        dir,
        &[
            "off-policy",
            "--baseline",
            "bm25_message",
            "--llm",
            llm.to_str().unwrap(),
            "--llm-cache",
            "off",
            "--threads",
            "1",
        ],
    )
}

#[test]
fn failed_answers_back_off_to_fewer_memories_then_get_the_error_answer() {
    let refused = first_test_question();
    let (port, prompts) = small_model(CONTEXT, Some(refused.clone()));
    let dir = tempfile::tempdir().unwrap();
    let out = off_policy(dir.path(), port);
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/off-policy/results/domain/Sample/bm25_message"),
    );
    let predictions = read(run.join("predict.json"));
    let predictions = predictions.as_array().unwrap();
    let timing = read(run.join("timing.json"));
    let timing = timing.as_array().unwrap();
    assert_eq!(predictions.len(), 10);
    let prompts = prompts.lock().unwrap().clone();
    let attempts = |question: &str| -> Vec<usize> {
        prompts
            .iter()
            .filter(|p| p.contains(question))
            .map(|p| p.chars().count())
            .collect()
    };
    let mut backed_off = 0;
    for (prediction, case) in predictions.iter().zip(timing) {
        assert_eq!(prediction["test_idx"], case["test_idx"]);
        let sent = prediction["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        let failed = case["failed_attempts"].as_u64().unwrap() as usize;
        if prediction["response"] == ERROR_RESPONSE {
            // Every number of memories from five down to one was tried; the question as asked
            // is what predict.json shows.
            assert_eq!(failed, 5, "{case}");
            assert_eq!(sent, refused);
            assert!(case["error"]
                .as_str()
                .unwrap()
                .contains("exceeds the model's context window"));
            let lengths = attempts(&refused);
            assert_eq!(lengths.len(), 5);
            assert!(lengths.windows(2).all(|w| w[0] > w[1]), "{lengths:?}");
            continue;
        }
        assert_eq!(prediction["response"], "a short answer");
        assert!(case["error"].is_null(), "{case}");
        assert!(sent.chars().count() <= CONTEXT);
        if failed > 0 {
            // Each attempt had one memory fewer, until the prompt fitted: the one answered.
            backed_off += 1;
            let question = sent[sent.rfind("User: \n").unwrap() + 7..]
                .split("\n\nBased on")
                .next()
                .unwrap()
                .to_string();
            let lengths = attempts(&question);
            assert_eq!(lengths.len(), failed + 1, "{question}");
            assert!(lengths.windows(2).all(|w| w[0] > w[1]), "{lengths:?}");
            assert_eq!(*lengths.last().unwrap(), sent.chars().count());
        }
    }
    assert!(backed_off > 0, "some case is answered with fewer memories");
    let errors = predictions
        .iter()
        .filter(|p| p["response"] == ERROR_RESPONSE)
        .count();
    assert_eq!(errors, 1);
    let summary = read(run.join("summary.json"));
    assert_eq!(summary["timing"]["answer_errors"], 1);
    let failed: u64 = timing
        .iter()
        .map(|c| c["failed_attempts"].as_u64().unwrap())
        .sum();
    assert_eq!(summary["timing"]["answer_failed_attempts"], failed);
    // The closing table shows the count.
    let table = String::from_utf8(out.stdout).unwrap();
    let header = table.lines().find(|l| l.starts_with("baseline")).unwrap();
    assert!(header.contains("errors"), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("bm25_message "))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[1..3], ["10", "1"], "{table}");
}

#[test]
fn a_run_in_which_no_answer_succeeds_fails_with_the_first_error() {
    let (port, _) = small_model(CONTEXT, Some(String::new()));
    let dir = tempfile::tempdir().unwrap();
    let out = off_policy(dir.path(), port);
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("every case failed to get an answer")
            && stderr.contains("exceeds the model's context window"),
        "{stderr}"
    );
    // Resumed with a model that answers, the failed cases are asked again.
    let run = only_run(
        dir.path()
            .join("runs/off-policy/results/domain/Sample/bm25_message"),
    );
    let (port, _) = small_model(usize::MAX, None);
    let llm = settings(dir.path(), port);
    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--baseline",
            "bm25_message",
            "--llm",
            llm.to_str().unwrap(),
            "--llm-cache",
            "off",
            "--resume",
            run.to_str().unwrap(),
        ],
    );
    assert_ok(&out);
    let summary = read(run.join("summary.json"));
    assert_eq!(summary["timing"]["answer_errors"], 0);
    let predictions = read(run.join("predict.json"));
    assert!(predictions
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["response"] == "a short answer"));
}
