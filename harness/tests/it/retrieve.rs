//! `mb-harness retrieve` and `list` on the built-in sample: the report, and one-line errors.

use serde_json::Value;

use crate::common::{assert_ok, harness};

#[test]
fn retrieve_reports_quality_and_cost_on_the_sample() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let store = dir.path().join("store");
    let output = harness(&[
        "retrieve",
        "--baseline",
        "bm25_dialog",
        "--k",
        "3,1",
        "--store",
        store.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_ok(&output);
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(
        table.contains("R@1") && table.contains("NDCG@3") && table.contains("all"),
        "{table}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // The sample has 24 questions of categories 1-4 and six sessions.
    assert_eq!(report["overall"]["questions"], 24);
    assert_eq!(report["items_stored"], 6);
    let recall_1 = report["overall"]["recall@1"].as_f64().unwrap();
    let recall_3 = report["overall"]["recall@3"].as_f64().unwrap();
    assert!(
        0.0 < recall_1 && recall_1 <= recall_3 && recall_3 <= 1.0,
        "{report}"
    );
    // Six sessions: the top three cover half of them, so recall@3 of session units is high.
    assert!(recall_3 > 0.5, "{report}");
    // With whole sessions as units, a question hits when any of its evidence sessions is
    // found: at least its share of them found, never less at a larger k.
    let hit = |k: usize| {
        report["overall"][format!("session_hit@{k}")]
            .as_f64()
            .unwrap()
    };
    assert!(
        hit(3) >= recall_3 && hit(1) <= hit(3) && hit(3) <= 1.0,
        "{report}"
    );
    assert!(hit(1) >= recall_1, "{report}");
    // The store is reusable: a second run over the same directory gives the same numbers.
    let again = harness(&[
        "retrieve",
        "--baseline",
        "bm25_dialog",
        "--k",
        "3,1",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(again.status.success());
    assert_eq!(
        String::from_utf8(again.stdout).unwrap().lines().nth(2),
        table.lines().nth(2)
    );
}

#[test]
fn bad_requests_fail_with_one_line() {
    for args in [
        vec!["retrieve", "--baseline", "bm26"],
        vec!["retrieve", "--baseline", "wo_memory"],
        vec!["retrieve", "--locomo", "/nonexistent/locomo.json"],
    ] {
        let output = harness(&args);
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("mb-harness: "), "{stderr}");
    }
    let listing = harness(&["list"]);
    let text = String::from_utf8(listing.stdout).unwrap();
    assert!(
        text.contains("Sample: Sample-Locomo, Sample-Stories") && text.contains("bm25_message"),
        "{text}"
    );
    // What `--baseline all` runs is said, system by system.
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap()
    };
    assert!(line("bm25_message ").contains(" all "), "{text}");
    assert!(line("hybrid ").contains("named alone"), "{text}");
    assert!(text.contains("py:module.path:ClassName"), "{text}");
}

/// `--memory-config` replaces the system's shipped settings for one run, and the report says
/// which were used: upstream's Whoosh parsing by default, plain queries from a file.
#[test]
fn memory_config_switches_the_query_syntax() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.toml");
    std::fs::write(&plain, "retrieve_k = 5\nquery_syntax = \"plain\"\n").unwrap();
    let run = |extra: &[&str]| -> Value {
        let json = dir.path().join("report.json");
        let mut args = vec![
            "retrieve",
            "--baseline",
            "bm25_message",
            "--k",
            "1,5",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        assert_ok(&harness(&args));
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let shipped = run(&[]);
    assert_eq!(shipped["settings"]["query_syntax"], "whoosh", "{shipped}");
    assert!(shipped["settings_origin"]
        .as_str()
        .unwrap()
        .contains("configs/memory/bm25.toml"));
    let replaced = run(&["--memory-config", plain.to_str().unwrap()]);
    assert_eq!(replaced["settings"]["query_syntax"], "plain", "{replaced}");
    assert_eq!(replaced["settings_origin"], plain.to_str().unwrap());
    // Every sample question ends in "?", so the two readings rank differently.
    assert_ne!(
        shipped["overall"], replaced["overall"],
        "the syntax changed nothing"
    );

    std::fs::write(&plain, "query_sintax = \"plain\"\n").unwrap();
    let output = harness(&["retrieve", "--memory-config", plain.to_str().unwrap()]);
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("plain.toml") && stderr.contains("query_sintax"),
        "{stderr}"
    );
}

/// The binary carries its memory settings: copied elsewhere and run from another directory it
/// reports the shipped settings as built in and measures the same numbers.
#[test]
fn a_relocated_binary_uses_its_built_in_settings() {
    let dir = tempfile::tempdir().unwrap();
    let moved = dir.path().join("bin/mb-harness");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_mb-harness"), &moved).unwrap();
    let report = |binary: &std::path::Path, name: &str| -> Value {
        let json = dir.path().join(name);
        let out = std::process::Command::new(binary)
            .current_dir(dir.path())
            .args(["retrieve", "--baseline", "bm25_message", "--json"])
            .arg(&json)
            .output()
            .unwrap();
        assert_ok(&out);
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let here = report(env!("CARGO_BIN_EXE_mb-harness").as_ref(), "here.json");
    let there = report(&moved, "there.json");
    let origin = there["settings_origin"].as_str().unwrap();
    assert!(origin.starts_with("built-in"), "{origin}");
    assert_eq!(there["settings"]["query_syntax"], "whoosh");
    assert_eq!(there["settings"], here["settings"]);
    assert_eq!(there["overall"], here["overall"]);
}

/// The LongMemEval fixture of `mb-datasets`' tests (the released format, written by us).
fn longmemeval_fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../datasets/tests/fixtures/longmemeval_tiny.json")
}

#[test]
fn retrieve_scores_longmemeval_with_the_official_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lme.json");
    let fixture = longmemeval_fixture();
    let output = harness(&[
        "retrieve",
        "--baseline",
        "bm25_message",
        "--longmemeval",
        fixture.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_ok(&output);
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(
        table.contains("S.Rall@5") && table.contains("temporal-reasoning"),
        "{table}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // Four questions: one abstention, one whose answer only the assistant gave (user history).
    assert_eq!(report["overall"]["questions"], 2);
    assert_eq!(report["skipped"]["abstention"], 1);
    assert_eq!(report["skipped"]["no_evidence_in_history"], 1);
    assert_eq!(report["history"], "user");
    // Only user turns were memorized: 2 + 2 + 1 + 1 + 1 of the scored questions' haystacks.
    assert_eq!(report["ingestion_turns"], 7);
    let session = &report["overall"]["session"];
    for k in [1, 3, 5, 10, 30, 50] {
        let all = session[format!("recall_all@{k}")].as_f64().unwrap();
        let any = session[format!("recall_any@{k}")].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&all) && all <= any, "{report}");
    }
    // The temporal question's two evidence turns share words with it (dentist visit, flight to
    // Lisbon): BM25 ranks both sessions first. The breed question's does not ("dog?" is a
    // Whoosh wildcard no turn matches): nothing retrieved, nothing found, at any k.
    let temporal = &report["per_type"]["temporal-reasoning"]["session"];
    assert_eq!(temporal["recall_all@5"], 1.0);
    assert_eq!(temporal["ndcg_any@5"], 1.0);
    let breed = &report["per_type"]["single-session-user"]["session"];
    assert_eq!(breed["recall_any@50"], 0.0);
    assert!(report["peak_rss_mib"].as_f64().unwrap() > 0.0);

    // With every turn, the assistant's answer is scored too.
    let all = harness(&[
        "retrieve",
        "--baseline",
        "bm25_message",
        "--longmemeval",
        fixture.to_str().unwrap(),
        "--history",
        "all",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_ok(&all);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["overall"]["questions"], 3);
}

#[test]
fn broken_longmemeval_files_are_reported_not_scored() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(longmemeval_fixture()).unwrap();
    let mut items: Vec<Value> = serde_json::from_str(&text).unwrap();
    items[0]["answer_session_ids"] = serde_json::json!(["answer_q1_1", "answer_missing"]);
    let path = dir.path().join("broken.json");
    std::fs::write(&path, serde_json::to_string(&items).unwrap()).unwrap();
    let json = dir.path().join("report.json");
    let output = harness(&[
        "retrieve",
        "--longmemeval",
        path.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_ok(&output);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["overall"]["questions"], 1);
    assert_eq!(report["broken"][0]["question_id"], "lme_q1");
    assert_eq!(
        report["broken"][0]["unknown_answer_session_ids"][0],
        "answer_missing"
    );

    // A malformed instance stops the run with one line naming the file, instance and field.
    items[2]["haystack_sessions"][1][0]["content"] = Value::Null;
    std::fs::write(&path, serde_json::to_string(&items).unwrap()).unwrap();
    let output = harness(&["retrieve", "--longmemeval", path.to_str().unwrap()]);
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("broken.json")
            && stderr.contains("instance 2")
            && stderr.contains("lme_q3")
            && stderr.contains("haystack_sessions[1][0].content"),
        "{stderr}"
    );
}
