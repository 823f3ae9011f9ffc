//! The engine on real conversations: LoCoMo turns from `../shared/data/locomo` (skipped with a
//! message when that folder is absent, as on a user's machine).
//!
//! Each conversation is a namespace of "Speaker X says: ..." records (MemoryBench's BM25-M
//! memory text). Checks that BM25 retrieval finds the annotated evidence turns for a solid share
//! of questions, and that a conversation ranks identically whether it shares the engine with
//! the seven others or is alone.

use std::path::PathBuf;

use memorybench::engine::{Engine, EngineOptions, NamespaceOptions, NewRecord};
use serde_json::Value;

fn locomo() -> Option<Vec<Value>> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/locomo/locomo10-dev.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "skipping: {} not found (test data lives outside the repository)",
            path.display()
        );
        return None;
    };
    Some(serde_json::from_str::<Vec<Value>>(&text).unwrap())
}

/// (dia_id, memory text) of every turn, in conversation order.
fn turns(sample: &Value) -> Vec<(String, String)> {
    let conv = &sample["conversation"];
    let mut out = Vec::new();
    for session in 1.. {
        let Some(turns) = conv
            .get(format!("session_{session}"))
            .and_then(Value::as_array)
        else {
            break;
        };
        for t in turns {
            let text = format!(
                "Speaker {} says: {}",
                t["speaker"].as_str().unwrap(),
                t["text"].as_str().unwrap()
            );
            out.push((t["dia_id"].as_str().unwrap().to_string(), text));
        }
    }
    out
}

fn ingest(engine: &Engine, ns: &str, sample: &Value) {
    engine
        .create_namespace(ns, NamespaceOptions::default())
        .unwrap();
    let records = turns(sample)
        .into_iter()
        .map(|(dia, text)| NewRecord::new(text).with_attribute("dia_id", dia));
    engine.put_many(ns, records).unwrap();
}

/// Evidence-bearing questions of categories 1-4 (category 5 is adversarial, no evidence).
fn questions(sample: &Value) -> Vec<(String, Vec<String>)> {
    sample["qa"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["category"].as_i64().is_some_and(|c| (1..=4).contains(&c)))
        .filter_map(|q| {
            let evidence: Vec<String> = q["evidence"]
                .as_array()?
                .iter()
                .filter_map(|e| e.as_str().map(String::from))
                .collect();
            (!evidence.is_empty()).then(|| (q["question"].as_str().unwrap().to_string(), evidence))
        })
        .collect()
}

#[test]
fn bm25_finds_evidence_and_namespaces_are_isolated() {
    let Some(samples) = locomo() else { return };
    let dir = tempfile::tempdir().unwrap();
    let shared = Engine::open(dir.path().join("all"), EngineOptions::default()).unwrap();
    for (i, s) in samples.iter().enumerate() {
        ingest(&shared, &format!("locomo-{i}"), s);
    }
    let alone = Engine::open(dir.path().join("one"), EngineOptions::default()).unwrap();
    ingest(&alone, "locomo-0", &samples[0]);

    let (mut hit, mut total) = (0usize, 0usize);
    for (i, s) in samples.iter().enumerate() {
        let ns = format!("locomo-{i}");
        for (question, evidence) in questions(s) {
            let hits = shared.search_text(&ns, &question, 5).unwrap();
            total += 1;
            if hits.iter().any(|h| {
                evidence
                    .iter()
                    .any(|e| h.record.attribute("dia_id") == Some(e))
            }) {
                hit += 1;
            }
            if i == 0 {
                let solo = alone.search_text(&ns, &question, 5).unwrap();
                let key = |hs: &[memorybench::engine::Hit]| {
                    hs.iter()
                        .map(|h| (h.record.text.clone(), (h.score * 1e4).round() as i64))
                        .collect::<Vec<_>>()
                };
                assert_eq!(key(&hits), key(&solo), "{question}");
            }
        }
    }
    let rate = hit as f64 / total as f64;
    eprintln!("BM25 evidence hit rate @5 over {total} LoCoMo questions: {rate:.3}");
    assert!(total > 500);
    assert!(
        rate > 0.4,
        "BM25 found evidence in the top 5 for only {rate:.3} of questions"
    );
}
