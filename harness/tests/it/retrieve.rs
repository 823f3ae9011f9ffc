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
}
