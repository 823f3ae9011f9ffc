//! The raw-data importers on the real upstream files in `../shared/data` (skipped when
//! absent): row counts, upstream's splits, and a round trip through the Hugging Face layout.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::import;
use mb_datasets::{load, HfDirectory, InMemorySource};
use serde_json::Value;

fn shared(path: &str) -> Option<String> {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(path);
    match fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(_) => {
            mb_core::test_data::skip(&format!("{} is absent", file.display()));
            None
        }
    }
}

fn ids(rows: &[serde_json::Map<String, Value>]) -> Vec<u64> {
    rows.iter()
        .map(|r| r["test_idx"].as_u64().unwrap())
        .collect()
}

#[test]
fn locomo_rows_and_splits_match_upstream() {
    let Some(text) = shared("locomo/locomo10-dev.json") else {
        return;
    };
    let datasets = import::locomo(
        &text,
        "locomo10-dev.json",
        |j| format!("Locomo-{j}"),
        Some(25),
        &import::Paraphrase,
    )
    .unwrap();
    assert_eq!(datasets.len(), 8);
    // Appendix A of the reference (test ids in selection order, train ids in sample order).
    let (name, locomo0) = &datasets[0];
    assert_eq!(name, "Locomo-0");
    assert_eq!(ids(&locomo0.test), [129, 189, 163, 143, 188]);
    assert_eq!(
        ids(&locomo0.train),
        [28, 6, 70, 62, 57, 35, 26, 173, 139, 22, 151, 108, 8, 7, 23, 55, 59, 154, 196, 50]
    );
    assert_eq!(ids(&datasets[5].1.test), [56, 62, 28, 1, 22]);

    // Category-5 options alternate, starting with the abstaining option as (a).
    let samples: Vec<Value> = serde_json::from_str(&text).unwrap();
    let all = import::locomo(
        &text,
        "locomo10-dev.json",
        |j| format!("Locomo-{j}"),
        None,
        &import::Paraphrase,
    )
    .unwrap();
    let rows: Vec<_> = all[0]
        .1
        .train
        .iter()
        .chain(&all[0].1.test)
        .cloned()
        .collect();
    assert_eq!(rows.len(), samples[0]["qa"].as_array().unwrap().len());
    let mut adversarial: Vec<(u64, Value)> = rows
        .iter()
        .map(|r| {
            (
                r["test_idx"].as_u64().unwrap(),
                serde_json::from_str::<Value>(r["info"].as_str().unwrap()).unwrap(),
            )
        })
        .filter(|(_, info)| info["category"] == 5)
        .collect();
    adversarial.sort_by_key(|(i, _)| *i);
    // Stored as upstream's loader stored them: a dict, the abstaining option written first.
    let first_text = rows
        .iter()
        .find(|r| r["test_idx"] == adversarial[0].0)
        .and_then(|r| r["info"].as_str())
        .unwrap();
    assert!(first_text.starts_with(r#"{"golden_answer": {"a": "Not mentioned"#));
    let first = &adversarial[0].1["golden_answer"];
    let second = &adversarial[1].1["golden_answer"];
    assert_eq!(first["a"], import::NOT_MENTIONED);
    assert_eq!(second["b"], import::NOT_MENTIONED);
    // Loaded, the options are upstream's json.dumps text, in the order written.
    let mut source = InMemorySource::new("imported");
    for (name, stored) in all {
        source.insert(name, stored);
    }
    let catalog = Catalog::builtin().unwrap();
    let loaded = load(&source, &catalog, DatasetType::Single, "Locomo-0").unwrap();
    let golden = |test_idx: u64| {
        let (_, row) = loaded[0].row(test_idx).unwrap();
        row.golden_answer().unwrap().to_string()
    };
    let trap = second["a"].as_str().unwrap();
    assert_eq!(
        golden(adversarial[1].0),
        format!(
            r#"{{"b": "Not mentioned in the conversation", "a": {}}}"#,
            serde_json::to_string(trap).unwrap()
        )
    );
    assert!(
        golden(adversarial[0].0).starts_with(r#"{"a": "Not mentioned in the conversation", "b": "#)
    );
    // Evidence is copied as whole turns.
    let with_evidence = rows
        .iter()
        .map(|r| serde_json::from_str::<Value>(r["info"].as_str().unwrap()).unwrap())
        .find(|info| info["evidence"].as_array().is_some_and(|e| !e.is_empty()))
        .unwrap();
    assert!(with_evidence["evidence"][0]["dia_id"].is_string());
    assert!(with_evidence["evidence"][0]["text"].is_string());
}

#[test]
fn nfcats_lexeval_and_hellobench_splits_match_upstream() {
    let (Some(csv), Some(lexeval)) = (shared("nfcats/test.csv"), shared("lexeval/5_4.json")) else {
        return;
    };
    let nfcats = import::nfcats(&csv, "test.csv", Some(250)).unwrap();
    assert_eq!((nfcats.train.len(), nfcats.test.len()), (200, 50));
    let mut test = ids(&nfcats.test);
    test.sort();
    assert_eq!(test[..5], [8, 79, 102, 177, 276]);

    let lexeval = import::lexeval(&lexeval, "5_4.json", "LexEval-QA", Some(250)).unwrap();
    assert_eq!((lexeval.train.len(), lexeval.test.len()), (200, 50));
    let mut test = ids(&lexeval.test);
    test.sort();
    assert_eq!(test[..5], [9, 24, 56, 57, 58]);

    let mut files = BTreeMap::new();
    // The shared data has no summarization file (its README says so): the four others suffice.
    for file in import::HELLOBENCH_FILES
        .iter()
        .filter(|file| **file != "summarization")
    {
        if let Some(text) = shared(&format!("hellobench/{file}.jsonl")) {
            files.insert(file.to_string(), text);
        }
    }
    if files.len() < 4 {
        return;
    }
    let creative = import::hellobench(&files, "HelloBench-Creative&Design").unwrap();
    assert_eq!((creative.train.len(), creative.test.len()), (181, 47));
    let qa = import::hellobench(&files, "HelloBench-Academic&Knowledge-QA").unwrap();
    assert_eq!((qa.train.len(), qa.test.len()), (170, 43));
}

#[test]
fn an_import_written_in_the_hf_layout_loads_back() {
    let Some(lexeval) = shared("lexeval/5_4.json") else {
        return;
    };
    let mut source = InMemorySource::new("import");
    source.insert(
        "LexEval-QA",
        import::lexeval(&lexeval, "5_4.json", "LexEval-QA", Some(250)).unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    source.write_hf_layout(dir.path()).unwrap();
    let catalog = Catalog::builtin().unwrap();
    let direct = &load(&source, &catalog, DatasetType::Single, "LexEval-QA").unwrap()[0];
    let reread = &load(
        &HfDirectory::open(dir.path()).unwrap(),
        &catalog,
        DatasetType::Single,
        "LexEval-QA",
    )
    .unwrap()[0];
    assert_eq!(direct.test, reread.test);
    assert_eq!(direct.train, reread.train);
    assert!(reread.test[0]
        .golden_answer()
        .is_some_and(|a| !a.is_empty()));
}
