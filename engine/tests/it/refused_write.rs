//! A write the store refuses leaves searches as the store has them, even a large delete, whose
//! records leave the search state while its batch is written (`engine/src/write/derived.rs`).
//! Fault points are process-wide, so the scenario runs in a child process of its own.

use std::process::Command;

use mb_engine::{Engine, EngineOptions, Filter, NamespaceOptions, NewRecord, RecordId, Space};

/// The child's engine directory.
const DIR_VAR: &str = "MB_REFUSED_WRITE_DIR";

const DIM: usize = 8;

/// Records of the deleted source: more than a batch whose deletes change the search state
/// beside the write (256).
const DELETED: u64 = 300;

#[test]
fn a_refused_filtered_delete_leaves_searches_as_the_store_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "refused_write::refused_delete_child",
            "--ignored",
        ])
        .env(DIR_VAR, dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "the child failed: {said}");
    assert!(said.contains("1 passed"), "the child ran nothing: {said}");
}

/// A unit vector of `DIM` numbers drawn from `seed`.
fn unit(seed: u64) -> Vec<f32> {
    let v: Vec<f32> = (0..DIM)
        .map(|i| ((seed * 31 + i as u64 * 17) % 23) as f32 - 11.0)
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

/// The ids each of a few vector and text searches finds.
fn answers(engine: &Engine) -> Vec<Vec<RecordId>> {
    let mut found = Vec::new();
    for q in [3u64, 150, 299, 350] {
        let hits = engine.search_vector("n", "s", &unit(q), 10).unwrap();
        found.push(hits.iter().map(|h| h.record.id).collect());
        let hits = engine
            .search_text("n", &format!("topic{}", q % 7), 10)
            .unwrap();
        found.push(hits.iter().map(|h| h.record.id).collect());
    }
    found
}

#[test]
#[ignore = "run by a_refused_filtered_delete_leaves_searches_as_the_store_has_them"]
fn refused_delete_child() {
    let Ok(dir) = std::env::var(DIR_VAR) else {
        return;
    };
    let engine = Engine::open(&dir, EngineOptions::default()).unwrap();
    engine
        .create_namespace("n", NamespaceOptions::default())
        .unwrap();
    engine.create_space(Space::new("s", DIM)).unwrap();
    let records = (0..DELETED + 100).map(|i| {
        let source = if i < DELETED { "gone" } else { "kept" };
        NewRecord::new(format!("note {i} about topic{}", i % 7))
            .with_attribute("source", source)
            .with_vector("s", unit(i))
    });
    let ids = engine.put_many("n", records).unwrap();
    // Searched first, so that the namespace's search state is loaded when the delete comes.
    let before = answers(&engine);
    assert!(before
        .iter()
        .flatten()
        .any(|id| ids[..DELETED as usize].contains(id)));

    let gone = Filter::new().attribute("source", "gone");
    fail::cfg("engine::write::refused", "return").unwrap();
    assert!(engine.delete_where("n", &gone).is_err());
    fail::remove("engine::write::refused");
    assert_eq!(answers(&engine), before, "searches as the store has them");

    assert_eq!(engine.delete_where("n", &gone).unwrap(), DELETED as usize);
    let after = answers(&engine);
    assert!(after
        .iter()
        .flatten()
        .all(|id| !ids[..DELETED as usize].contains(id)));
    assert!(after.iter().all(|found| !found.is_empty()));
}
