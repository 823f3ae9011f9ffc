//! `mb-harness off-policy --longmemeval FILE`: LongMemEval's questions answered on memories of
//! their haystacks, judged, counted, written in the official format, and resumable.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common::{assert_ok, chat_server, harness, in_dir, json as read, only_run};

/// The LongMemEval fixture of `mb-datasets`' tests (the released format, written by us).
pub(crate) fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/tests/fixtures/longmemeval_tiny.json")
}

/// `mb-harness off-policy --longmemeval FILE ARGS` with its store and results under `root`.
pub(crate) fn off_policy(root: &Path, file: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["off-policy", "--longmemeval", file.to_str().unwrap()];
    all.extend_from_slice(args);
    let all = in_dir(root, &all);
    harness(&all.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The run directory of `system` on the fixture.
pub(crate) fn run_of(root: &Path, system: &str) -> PathBuf {
    only_run(root.join(format!(
        "runs/off-policy/longmemeval/longmemeval_tiny/{system}"
    )))
}

/// The predictions file's lines.
fn predictions(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("predictions.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn off_policy_answers_every_question_offline_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture();
    let out = off_policy(dir.path(), &file, &["--baseline", "hybrid"]);
    assert_ok(&out);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("hybrid on LongMemEval") && table.contains("temporal-reasoning"),
        "{table}"
    );
    let run = run_of(dir.path(), "hybrid");
    let lines = predictions(&run);
    let ids: Vec<&str> = lines
        .iter()
        .map(|l| l["question_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["lme_q1", "lme_q2_abs", "lme_q3", "lme_q4"]);
    for line in &lines {
        assert!(!line["hypothesis"].as_str().unwrap().is_empty(), "{line}");
        assert_eq!(line["autoeval_label"]["model"], "offline (lexical proxy)");
    }
    let summary = read(run.join("summary.json"));
    assert_eq!(summary["questions"], 4);
    assert_eq!(summary["accuracy"]["abstention_questions"], 1);
    assert_eq!(
        summary["accuracy"]["per_type"].as_object().unwrap().len(),
        4
    );
    assert_eq!(summary["about"]["history"], "all");
    // Every turn of each haystack memorized (history all: 6 + 2 + 8 + 2), and timed.
    let timing = read(run.join("timing.json"));
    let turns: Vec<u64> = timing
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["turns"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [6, 2, 8, 2]);
    assert!(
        summary["timing"]["memory_processing_seconds_per_case"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(
        summary["timing"]["ingestion_turns_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // Cut the log back to its first two cases and a torn third: resuming answers the other two
    // and writes the same predictions.
    let partial = run.join("predict.partial.jsonl");
    let log = std::fs::read_to_string(&partial).unwrap();
    let kept: Vec<&str> = log.lines().take(2).collect();
    std::fs::write(
        &partial,
        format!("{}\n{{\"index\": 2, \"quest", kept.join("\n")),
    )
    .unwrap();
    std::fs::remove_file(run.join("predictions.jsonl")).unwrap();
    let resumed = off_policy(
        dir.path(),
        &file,
        &["--baseline", "hybrid", "--resume", run.to_str().unwrap()],
    );
    assert_ok(&resumed);
    assert_eq!(predictions(&run), lines);
    assert_eq!(
        std::fs::read_to_string(&partial).unwrap().lines().count(),
        4
    );
}

#[test]
fn model_calls_are_counted_per_question_and_the_judge_apart() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let notes = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let noted = notes.clone();
    let port = chat_server(move |sent| {
        counted.fetch_add(1, Ordering::SeqCst);
        let prompt = sent["messages"][0]["content"].as_str().unwrap_or_default();
        if prompt.starts_with("Below is one earlier chat session") {
            noted.fetch_add(1, Ordering::SeqCst);
        }
        json!({"choices": [{"message": {"role": "assistant", "content": "yes"},
                "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 30, "completion_tokens": 1}})
    });
    let settings = dir.path().join("llm.toml");
    let endpoint = format!(
        "provider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n"
    );
    std::fs::write(
        &settings,
        format!(
            "reasks = 0\n[answer]\n{endpoint}[judge]\n{endpoint}\
             [memory]\nprovider = \"offline\"\n[simulator]\nprovider = \"offline\"\n"
        ),
    )
    .unwrap();
    let out = off_policy(
        dir.path(),
        &fixture(),
        &[
            "--baseline",
            "bm25_message",
            "--reading",
            "chain-of-note",
            "--llm",
            settings.to_str().unwrap(),
            "--llm-cache",
            "off",
        ],
    );
    assert_ok(&out);
    let run = run_of(dir.path(), "bm25_message");
    let summary = read(run.join("summary.json"));
    // The judge says "yes" to everything: every question is correct.
    assert_eq!(summary["accuracy"]["overall"], 1.0);
    assert_eq!(summary["about"]["judge"], "m");
    assert_eq!(summary["about"]["reading"], "chain-of-note");
    // Chain-of-Note as the official reading does it: a note per retrieved message (one call
    // each), then the answer.
    let cases: Vec<Value> = std::fs::read_to_string(run.join("predict.partial.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut shown = 0;
    for case in &cases {
        let units = case["shown_turns"].as_array().unwrap().len();
        assert!(units > 0, "{case}");
        shown += units;
        let calls = (units + 1) as f64;
        assert_eq!(case["timing"]["llm_calls_predict"], calls, "{case}");
        assert_eq!(
            case["timing"]["input_tokens_predict"],
            30.0 * calls,
            "{case}"
        );
        assert_eq!(case["judge"]["llm_operations"], 1, "{case}");
    }
    assert_eq!(notes.load(Ordering::SeqCst), shown);
    // The server saw one ping per model role, then the notes, an answer and a verdict per
    // question.
    assert_eq!(calls.load(Ordering::SeqCst), 2 + shown + 2 * cases.len());
}

#[test]
fn the_judge_uses_the_templates_the_user_supplies() {
    let dir = tempfile::tempdir().unwrap();
    let judged = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = judged.clone();
    let port = chat_server(move |sent| {
        let prompt = sent["messages"][0]["content"].as_str().unwrap_or_default();
        seen.lock().unwrap().push(prompt.to_string());
        json!({"choices": [{"message": {"role": "assistant", "content": "no"},
                "finish_reason": "stop"}]})
    });
    let settings = dir.path().join("llm.toml");
    std::fs::write(
        &settings,
        format!("[judge]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n"),
    )
    .unwrap();
    let keys = [
        "single-session-user",
        "single-session-assistant",
        "single-session-preference",
        "temporal-reasoning",
        "knowledge-update",
        "multi-session",
        "abstention",
    ];
    let templates: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| {
            (
                k.to_string(),
                json!(format!("[{k}] {{question}} | {{answer}} | {{response}}")),
            )
        })
        .collect();
    let prompts = dir.path().join("prompts.json");
    std::fs::write(&prompts, Value::Object(templates.clone()).to_string()).unwrap();
    let out = off_policy(
        dir.path(),
        &fixture(),
        &[
            "--baseline",
            "bm25_message",
            "--llm",
            settings.to_str().unwrap(),
            "--judge-prompts",
            prompts.to_str().unwrap(),
        ],
    );
    assert_ok(&out);
    let prompts_seen = judged.lock().unwrap().clone();
    let verdicts: Vec<&String> = prompts_seen.iter().filter(|p| p.starts_with('[')).collect();
    assert_eq!(verdicts.len(), 4, "{prompts_seen:?}");
    assert!(
        verdicts.iter().any(|p| p.starts_with("[abstention] ")),
        "{verdicts:?}"
    );
    let run = run_of(dir.path(), "bm25_message");
    assert_eq!(read(run.join("summary.json"))["accuracy"]["overall"], 0.0);

    // A file without every template is refused before any work, naming the file and the key.
    let mut partial = templates;
    partial.remove("knowledge-update");
    std::fs::write(&prompts, Value::Object(partial).to_string()).unwrap();
    let out = off_policy(
        dir.path(),
        &fixture(),
        &[
            "--baseline",
            "bm25_message",
            "--judge-prompts",
            prompts.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("prompts.json: no template for knowledge-update"),
        "{stderr}"
    );
}

#[test]
fn a_file_name_that_is_not_utf8_is_a_path_like_any_other() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"tiny\xff.json"));
    std::fs::copy(fixture(), &file).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(["off-policy", "--baseline", "bm25_message", "--longmemeval"])
        .arg(&file)
        .arg("--store")
        .arg(dir.path().join("store"))
        .arg("--output-dir")
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ok(&out);
}

#[test]
fn an_empty_question_list_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.json");
    std::fs::write(&file, "[]").unwrap();
    let out = off_policy(dir.path(), &file, &["--baseline", "bm25_message"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("empty.json") && stderr.contains("no LongMemEval question"),
        "{stderr}"
    );
}

#[test]
fn an_error_quotes_at_most_an_excerpt_of_a_huge_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut instances: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    // Five megabytes where a list of session ids belongs: the parser's error quotes the value.
    instances[0]["haystack_session_ids"] = Value::String("x".repeat(5 << 20));
    let file = dir.path().join("huge.json");
    std::fs::write(&file, serde_json::to_string(&instances).unwrap()).unwrap();
    let out = off_policy(dir.path(), &file, &["--baseline", "bm25_message"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.len() < 2_000, "{} bytes of error", stderr.len());
    assert!(
        stderr.contains("huge.json"),
        "{}",
        &stderr[..stderr.len().min(500)]
    );
}

#[test]
fn a_turn_too_large_to_store_is_refused_naming_the_file_and_the_question() {
    let dir = tempfile::tempdir().unwrap();
    let mut instances: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    // Above the engine's 8 MiB limit on one record's text.
    instances[1]["haystack_sessions"][0][0]["content"] = Value::String("word ".repeat(2 << 20));
    let question = instances[1]["question_id"].as_str().unwrap().to_string();
    let file = dir.path().join("large-turn.json");
    std::fs::write(&file, serde_json::to_string(&instances).unwrap()).unwrap();
    let out = off_policy(dir.path(), &file, &["--baseline", "bm25_dialog"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.len() < 2_000, "{} bytes of error", stderr.len());
    assert!(
        stderr.contains("large-turn.json")
            && stderr.contains(&format!("question {question}"))
            && stderr.contains("above the limit"),
        "{stderr}"
    );
}
