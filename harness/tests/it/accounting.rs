//! Honest accounting: a model whose output is garbage shows up as counted fallbacks (per case
//! and operation in `timing.json`, per run in `summary.json` and the printed table), and each
//! case's LLM calls are measured (re-asks and the memory's own calls included), not assumed.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::common::{assert_ok, chat_server, harness, harness_in, json as read, only_run};

/// `off-policy --baseline SYSTEM FLAGS` on the sample in `dir` with a memory model that
/// answers "garbage" to everything, its settings starting with `head`; the command's output
/// and its run directory.
fn garbage_run(dir: &Path, head: &str, system: &str, flags: &[&str]) -> (Output, PathBuf) {
    let port = chat_server(
        |_| json!({"choices": [{"message": {"role": "assistant", "content": "garbage"}, "finish_reason": "stop"}]}),
    );
    let settings = dir.join("llm.toml");
    std::fs::write(
        &settings,
        format!(
            "{head}[memory]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"garbage\"\n"
        ),
    )
    .unwrap();
    let mut args = vec!["off-policy", "--baseline", system];
    args.extend_from_slice(flags);
    args.extend(["--llm", settings.to_str().unwrap(), "--llm-cache", "off"]);
    let out = harness_in(dir, &args);
    assert_ok(&out);
    let run = only_run(dir.join(format!("runs/off-policy/results/domain/Sample/{system}")));
    (out, run)
}

#[test]
fn a_model_returning_garbage_is_visible_as_fallbacks() {
    let dir = tempfile::tempdir().unwrap();
    let (out, run) = garbage_run(dir.path(), "", "a_mem", &["--embedder", "hashing"]);
    let timing = read(run.join("timing.json"));
    let cases = timing.as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        // A-Mem asks the model for the question's keywords and, as upstream, sends the same
        // request again until the reply parses: garbage every time, so the resend cap (50
        // sends) ends in upstream's fallback (no keywords), counted.
        assert_eq!(case["fallbacks"], json!({"query_keywords": 1}), "{case}");
        assert_eq!(case["seconds"]["fallbacks_predict"], 1.0, "{case}");
        // Fifty model calls and the offline answer.
        assert_eq!(case["seconds"]["llm_calls_predict"], 51.0, "{case}");
    }
    let summary = read(run.join("summary.json"));
    let fallbacks = &summary["timing"]["fallbacks"];
    let n = cases.len() as f64;
    assert_eq!(fallbacks["prediction"], n, "{summary}");
    assert_eq!(fallbacks["memory"], 0.0, "{summary}");
    assert_eq!(
        fallbacks["by_operation"],
        json!({"memory/query_keywords": cases.len()}),
        "{summary}"
    );
    let resends = &summary["timing"]["resends"];
    assert_eq!(
        resends["by_operation"],
        json!({"memory/query_keywords": 49 * cases.len()}),
        "{summary}"
    );
    assert_eq!(
        resends["cap_hits"],
        json!({"memory/query_keywords": cases.len()}),
        "{summary}"
    );
    // The closing table shows them.
    let table = String::from_utf8_lossy(&out.stdout);
    let header = table.lines().next().unwrap();
    assert!(header.contains("fallbacks"), "{table}");
    let row = table.lines().find(|l| l.starts_with("a_mem")).unwrap();
    let columns: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        columns[columns.len() - 2],
        format!("{}", cases.len()),
        "{table}"
    );

    // The HTML report shows them too.
    let report = dir.path().join("report.html");
    let out = harness(&[
        "report",
        dir.path().join("runs").to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]);
    assert_ok(&out);
    let html = std::fs::read_to_string(report).unwrap();
    assert!(html.contains("<th>fallbacks</th>"), "{html}");
    assert!(
        html.contains(&format!("class=\"fallbacks-bad\">{}</td>", cases.len())),
        "{html}"
    );
}

#[test]
fn the_run_records_the_date_mem0_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(
        dir.path(),
        &[
            "off-policy",
            "--baseline",
            "bm25_message",
            "--date",
            "2023-05-08",
        ],
    );
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/off-policy/results/domain/Sample/bm25_message"),
    );
    let config: Value = read(run.join("run_config.json"));
    assert_eq!(config["date"], "2023-05-08");
}

#[test]
fn tolerant_output_handling_re_asks_as_configured_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let head = "output_handling = \"tolerant\"\nreasks = 1\n";
    let (_, run) = garbage_run(dir.path(), head, "mem0", &["--limit", "2"]);
    let config = read(run.join("run_config.json"));
    assert_eq!(
        (
            config["output_handling"].as_str(),
            config["reasks"].as_u64()
        ),
        (Some("tolerant"), Some(1))
    );
    // Mem0's fact extraction of each memorized dialog: the request and one re-ask, then no facts.
    let memorized = read(run.join("memorization.json"));
    for dialog in memorized.as_array().unwrap() {
        assert_eq!(dialog["cost"]["llm_operations"], 1, "{dialog}");
        assert_eq!(
            dialog["cost"]["fallbacks"],
            json!({"extract_facts": 1}),
            "{dialog}"
        );
    }
    let summary = read(run.join("summary.json"));
    let resends = &summary["timing"]["resends"]["by_operation"];
    assert!(
        resends["memory/extract_facts"].as_u64() > Some(0),
        "{summary}"
    );
}
