//! `on-policy` with its default steps and batch size: what each step memorizes stays the size
//! of the rows it was drawn from.

use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::sample::{sample_source, SAMPLE_SET};
use mb_datasets::{load, Row};
use serde_json::Value;

use crate::common::{assert_ok, harness_in, json, only_run};

/// The sample's training rows in the order on-policy pools them (datasets in catalog order).
fn training_pool() -> Vec<Row> {
    let catalog = Catalog::builtin().unwrap();
    load(
        &sample_source().unwrap(),
        &catalog,
        DatasetType::Domain,
        SAMPLE_SET,
    )
    .unwrap()
    .into_iter()
    .flat_map(|dataset| dataset.train)
    .collect()
}

#[test]
fn on_policy_memorises_the_questions_asked_not_the_prompts_with_memories() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(dir.path(), &["on-policy", "--baseline", "bm25_message"]);
    assert_ok(&out);
    let run = only_run(
        dir.path()
            .join("runs/on-policy/results/domain/Sample/bm25_message"),
    );
    let pool = training_pool();
    // A row's own size: everything it holds (question, reference, recorded dialogs).
    let row_bytes: Vec<usize> = pool
        .iter()
        .map(|row| Value::Object(row.to_columns()).to_string().len())
        .collect();
    let mut sizes = Vec::new();
    // The defaults: ten steps of (at most) 100 draws from the sample's 40 training rows.
    for step in 0..10 {
        let path = run.join(format!("step_{step}/train_dialogs.json"));
        let dialogs = json(path.clone());
        let dialogs = dialogs.as_array().unwrap();
        assert_eq!(dialogs.len(), pool.len(), "step {step}");
        let mut bound = 0;
        for dialog in dialogs {
            let drawn = dialog["training_set_idx"].as_u64().unwrap() as usize;
            let row = &pool[drawn];
            let messages = dialog["dialog"].as_array().unwrap();
            // The dialog opens with the row's question as asked, not a prompt with memories.
            let asked = row.input.initial_messages();
            for (sent, original) in messages.iter().zip(&asked) {
                assert_eq!(sent["content"].as_str(), Some(original.content.as_str()));
                assert!(sent.get("origin_content").is_none(), "{sent}");
            }
            // Its question, the answer and the feedback: no more than twice the row itself.
            let size = Value::Array(messages.clone()).to_string().len();
            assert!(size <= 2 * row_bytes[drawn], "step {step}: {size} bytes");
            bound += 2 * row_bytes[drawn] + 200;
        }
        let size = std::fs::metadata(&path).unwrap().len() as usize;
        assert!(
            size <= bound,
            "step {step}: {size} bytes, above {bound} bytes"
        );
        sizes.push(size);
    }
    // Each step memorizes about as much as the first: nothing compounds.
    for (step, size) in sizes.iter().enumerate() {
        assert!(
            *size <= sizes[0] + sizes[0] / 4,
            "step {step}: {size} bytes, step 0: {} bytes",
            sizes[0]
        );
    }
}
