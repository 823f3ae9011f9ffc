//! `mb-harness import` on the real raw files (skipped when `../shared/data` is absent), then an
//! off-policy run over the imported Chinese LexEval-QA rows.

use std::path::Path;

use crate::common::{assert_ok, harness};

#[test]
fn imported_raw_data_runs_off_policy() {
    let raw = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/lexeval/5_4.json");
    if !raw.exists() {
        mb_core::test_data::skip(&format!("{} is absent", raw.display()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = harness(&[
        "import",
        "--out",
        data.to_str().unwrap(),
        "--lexeval-qa",
        raw.to_str().unwrap(),
    ]);
    assert_ok(&out);
    assert!(data.join("dataset/LexEval-QA/test.jsonl").exists());
    let run = harness(&[
        "off-policy",
        "--data",
        data.to_str().unwrap(),
        "--dataset-type",
        "single",
        "--set-name",
        "LexEval-QA",
        "--baseline",
        "bm25_message",
        "--store",
        dir.path().join("store").to_str().unwrap(),
        "--output-dir",
        dir.path().join("runs").to_str().unwrap(),
    ]);
    assert_ok(&run);
    let table = String::from_utf8(run.stdout).unwrap();
    // 50 test questions, scored with ROUGE-L.
    assert!(
        table.contains("bm25_message") && table.contains(" 50 "),
        "{table}"
    );
    let nothing = harness(&["import", "--out", data.to_str().unwrap()]);
    assert!(!nothing.status.success());
}

#[test]
fn an_empty_locomo_file_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("locomo-empty.json");
    std::fs::write(&file, "[]").unwrap();
    let out = harness(&[
        "import",
        "--locomo",
        file.to_str().unwrap(),
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("locomo-empty.json") && stderr.contains("no LoCoMo conversation"),
        "{stderr}"
    );
}
