//! Which words a run's prompts were in, as its results say: the paraphrase by default, or
//! upstream's commit with `--upstream` and every prompt that still went out paraphrased.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{assert_ok, chat_server, harness_in, json as read, only_run};

const PARAPHRASED: &str = "prompts: paraphrased (not comparable with the paper)";

/// Upstream's checkout beside the project, or `None` after a `skipped:` line (a failure under
/// CI).
fn checkout() -> Option<PathBuf> {
    mb_core::test_data::upstream_checkout()
}

#[test]
fn without_upstream_every_result_says_the_prompts_are_the_paraphrase() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(
        dir.path(),
        &["off-policy", "--baseline", "bm25_message", "--limit", "1"],
    );
    assert_ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(PARAPHRASED), "{stdout}");
    let run = only_run(
        dir.path()
            .join("runs/off-policy/results/domain/Sample/bm25_message"),
    );
    let expected = json!(PARAPHRASED.trim_start_matches("prompts: "));
    assert_eq!(read(run.join("summary.json"))["prompts"], expected);
    assert_eq!(read(run.join("run_config.json"))["prompts"], expected);
}

/// A model that answers every request: A-Mem's keyword and note requests with JSON of their
/// schema, anything else with a word.
fn stub_reply(sent: &Value) -> Value {
    let schema = &sent["response_format"]["json_schema"]["schema"]["properties"];
    let content = if schema["keywords"]["type"] == "string" {
        json!({"keywords": "tile"}).to_string()
    } else if !schema.is_null() {
        json!({
            "keywords": ["tile"], "context": "A gift.", "tags": ["travel"],
            "should_evolve": false, "actions": [], "suggested_connections": [],
            "tags_to_update": [], "new_context_neighborhood": [], "new_tags_neighborhood": [],
        })
        .to_string()
    } else {
        "stub".to_string()
    };
    json!({"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})
}

/// `off-policy --baseline SYSTEM --limit 1` with the answer and memory roles on a stub and
/// upstream's words: the command's output, its run directory and its flags without
/// `--upstream`.
fn run_in_upstreams_words(
    dir: &Path,
    upstream: &Path,
    system: &str,
) -> (std::process::Output, PathBuf, Vec<String>) {
    let port = chat_server(stub_reply);
    let settings = dir.join("llm.toml");
    let role = |name: &str| {
        format!("[{name}]\nprovider = \"vllm\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"stub\"\n")
    };
    std::fs::write(&settings, role("answer") + &role("memory")).unwrap();
    let flags: Vec<String> = [
        "off-policy",
        "--baseline",
        system,
        "--limit",
        "1",
        "--llm-cache",
        "off",
        "--llm",
        settings.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    let mut with_upstream = flags.clone();
    with_upstream.extend(["--upstream".to_string(), upstream.display().to_string()]);
    let args: Vec<&str> = with_upstream.iter().map(String::as_str).collect();
    let out = harness_in(dir, &args);
    assert_ok(&out);
    let run = only_run(dir.join(format!("runs/off-policy/results/domain/Sample/{system}")));
    (out, run, flags)
}

#[test]
fn memoryos_goes_out_wholly_in_upstreams_words_and_resumes_only_in_them() {
    let Some(upstream) = checkout() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (out, run, flags) = run_in_upstreams_words(dir.path(), &upstream, "memoryos");
    let prompts = read(run.join("summary.json"))["prompts"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompts.starts_with("upstream THUIR/MemoryBench 9a33aae9d0c1 (")
            && prompts.ends_with(" templates)"),
        "every request of the run in upstream's words: {prompts}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("prompts: {prompts}")), "{stdout}");
    // Resumed alone, the run goes on with its recorded command: in upstream's words.
    let run_dir = run.display().to_string();
    let again = harness_in(dir.path(), &["off-policy", "--resume", &run_dir]);
    assert_ok(&again);
    assert_eq!(read(run.join("summary.json"))["prompts"], prompts.as_str());
    // It cannot go on in other words: a run that recorded no command (made before commands
    // were recorded), resumed with flags lacking the checkout, is refused.
    let config_path = run.join("run_config.json");
    let mut config = read(config_path.clone());
    config.as_object_mut().unwrap().remove("command");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut resumed: Vec<&str> = flags.iter().map(String::as_str).collect();
    resumed.extend(["--resume", &run_dir]);
    let refused = harness_in(dir.path(), &resumed);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("prompts"), "{stderr}");
}

#[test]
fn a_prompt_without_upstream_text_is_named_in_the_results() {
    let Some(upstream) = checkout() else { return };
    let dir = tempfile::tempdir().unwrap();
    // The hybrid memory is this project's own: upstream has no words for its answer.
    let (_, run, _) = run_in_upstreams_words(dir.path(), &upstream, "hybrid");
    let prompts = read(run.join("summary.json"))["prompts"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompts.starts_with("upstream THUIR/MemoryBench 9a33aae9d0c1")
            && prompts.ends_with(
                "; paraphrased (no upstream text yet): answer of a system beyond upstream, key_facts"
            ),
        "{prompts}"
    );
}

#[test]
fn a_folder_that_is_no_upstream_checkout_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--limit",
            "1",
            "--upstream",
            "/nonexistent/MemoryBench",
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/nonexistent/MemoryBench") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
fn locomo_feedback_is_upstreams_rule_text_in_its_words() {
    let Some(upstream) = checkout() else { return };
    let words = mb_upstream::Upstream::open(&upstream).unwrap();
    let texts = [true, false].map(|correct| {
        words
            .rule_feedback(mb_upstream::RuleFeedbackOf::Locomo, correct)
            .unwrap()
    });
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "on-policy",
            "--baseline",
            "bm25_message",
            "--dataset-type",
            "single",
            "--set-name",
            "Sample-Locomo",
            "--step",
            "1",
            "--batch-size",
            "8",
            "--upstream",
            upstream.to_str().unwrap(),
        ],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/on-policy/results/single/Sample-Locomo/bm25_message"),
    );
    let dialogs = read(run.join("step_0/train_dialogs.json"));
    let mut feedback = 0;
    for dialog in dialogs.as_array().unwrap() {
        let messages = dialog["dialog"].as_array().unwrap();
        // Every user message after an answer is the simulated user's rule-based feedback.
        for pair in messages.windows(2) {
            if pair[0]["role"] == "assistant" && pair[1]["role"] == "user" {
                let text = pair[1]["content"].as_str().unwrap();
                assert!(texts.iter().any(|t| t == text), "{text}");
                feedback += 1;
            }
        }
    }
    assert!(feedback > 0, "no feedback was given");
}
