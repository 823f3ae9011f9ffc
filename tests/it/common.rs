//! LoCoMo helpers shared by the integration tests (data from `../shared/data/locomo`, skipped
//! with a message when absent, as on a user's machine).

use std::path::PathBuf;

use memorybench::engine::{Engine, NamespaceOptions, NewRecord};
use serde_json::Value;

pub fn locomo() -> Option<Vec<Value>> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/locomo/locomo10-dev.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        mb_core::test_data::skip(&format!(
            "{} not found (test data lives outside the repository)",
            path.display()
        ));
        return None;
    };
    Some(serde_json::from_str::<Vec<Value>>(&text).unwrap())
}

/// (dia_id, memory text) of every turn, in conversation order.
pub fn turns(sample: &Value) -> Vec<(String, String)> {
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

pub fn ingest(engine: &Engine, ns: &str, sample: &Value) {
    engine
        .create_namespace(ns, NamespaceOptions::default())
        .unwrap();
    let records = turns(sample)
        .into_iter()
        .map(|(dia, text)| NewRecord::new(text).with_attribute("dia_id", dia));
    engine.put_many(ns, records).unwrap();
}

/// Evidence-bearing questions of categories 1-4 (category 5 is adversarial, no evidence).
pub fn questions(sample: &Value) -> Vec<(String, Vec<String>)> {
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
