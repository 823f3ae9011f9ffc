//! Which words a run's prompts were in, as its results say: the paraphrase by default, or
//! upstream's commit with `--upstream` and every prompt that still went out paraphrased.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::{assert_ok, chat_server, harness_in, json as read, only_run};

const PARAPHRASED: &str = "prompts: paraphrased (not comparable with the paper)";

/// Upstream's checkout beside the project, or `None` after a `skipped:` line (a failure under
/// CI).
fn checkout() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/upstream/MemoryBench");
    if dir.join("memorybench.py").is_file() {
        return Some(dir);
    }
    mb_core::test_data::skip(&format!("no upstream checkout at {}", dir.display()));
    None
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

#[test]
fn with_upstream_results_name_the_commit_and_each_prompt_still_paraphrased() {
    let Some(upstream) = checkout() else { return };
    let dir = tempfile::tempdir().unwrap();
    let port = chat_server(
        |_| json!({"choices": [{"message": {"role": "assistant", "content": "stub"}, "finish_reason": "stop"}]}),
    );
    let settings = dir.path().join("llm.toml");
    let role = |name: &str| {
        format!("[{name}]\nprovider = \"vllm\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"stub\"\n")
    };
    std::fs::write(&settings, role("answer") + &role("memory")).unwrap();
    let upstream = upstream.to_str().unwrap();
    let flags = [
        "off-policy",
        "--baseline",
        "memoryos",
        "--limit",
        "1",
        "--llm-cache",
        "off",
        "--llm",
        settings.to_str().unwrap(),
    ];
    let mut with_upstream = flags.to_vec();
    with_upstream.extend(["--upstream", upstream]);
    let out = harness_in(dir.path(), &with_upstream);
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/off-policy/results/domain/Sample/memoryos"),
    );
    let prompts = read(run.join("summary.json"))["prompts"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompts.starts_with("upstream THUIR/MemoryBench 9a33aae9d0c1")
            && prompts.contains("paraphrased (no upstream text yet): ")
            && !prompts.contains("answer.memoryos"),
        "{prompts}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("prompts: {prompts}")), "{stdout}");
    // The run cannot go on in other words.
    let mut resumed = flags.to_vec();
    let run_dir = run.display().to_string();
    resumed.extend(["--resume", &run_dir]);
    let refused = harness_in(dir.path(), &resumed);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("prompts"), "{stderr}");
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
