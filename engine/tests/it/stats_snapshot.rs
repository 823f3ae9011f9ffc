//! BM25 statistics written at close and read back at the next open (`snapshot.rs`): a reopened
//! namespace scores exactly as the live one did, and a write after the snapshot never lets a
//! stale one be used, even when the namespace was not loaded when the write happened.

use std::path::Path;

use mb_engine::{Batch, Engine, EngineOptions, NamespaceOptions, NewRecord, RecordId};

pub(crate) const TEXTS: [&str; 6] = [
    "the cat sat on the mat",
    "a cat and a dog went out",
    "dogs chase cats around the garden",
    "the weather was cold and grey",
    "cat food is on sale today",
    "nothing in common here",
];

pub(crate) fn open(dir: &Path) -> Engine {
    Engine::open(dir, EngineOptions::default()).unwrap()
}

/// A store holding [`TEXTS`] in namespace `n`; the ids in order.
fn filled(dir: &Path) -> (Engine, Vec<RecordId>) {
    let engine = open(dir);
    engine
        .ensure_namespace("n", NamespaceOptions::default())
        .unwrap();
    let mut batch = Batch::new();
    for text in TEXTS {
        batch.put(NewRecord::new(text));
    }
    let ids = engine.write("n", batch).unwrap().ids;
    (engine, ids)
}

/// `(id, score)` of every hit of a query sharing terms with most records.
pub(crate) fn scores(engine: &Engine) -> Vec<(RecordId, f32)> {
    let hits = engine
        .search_text("n", "cat OR mat OR food OR weather OR garden", 10)
        .unwrap();
    assert!(hits.len() >= 3);
    hits.iter().map(|h| (h.record.id, h.score)).collect()
}

#[test]
fn a_reopened_namespace_scores_as_the_live_one() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, ids) = filled(dir.path());
    let mut delete = Batch::new();
    delete.delete(ids[1]);
    engine.write("n", delete).unwrap();
    let live = scores(&engine);
    engine.close().unwrap();
    let engine = open(dir.path());
    assert_eq!(scores(&engine), live, "after one close");
    engine.close().unwrap();
    // Closed again without a write: the snapshot is still the namespace's.
    let engine = open(dir.path());
    assert_eq!(scores(&engine), live, "after two");
}

#[test]
fn a_write_after_the_snapshot_is_never_scored_with_it() {
    // Store a: snapshot at close, then a session that deletes a record without loading the
    // namespace's statistics, then a reopen.
    let a = tempfile::tempdir().unwrap();
    let (engine, ids) = filled(a.path());
    scores(&engine);
    engine.close().unwrap();
    let engine = open(a.path());
    let mut delete = Batch::new();
    delete.delete(ids[0]);
    engine.write("n", delete).unwrap();
    engine.close().unwrap();
    let engine = open(a.path());
    let after = scores(&engine);

    // Store b: the same change on statistics kept live all along.
    let b = tempfile::tempdir().unwrap();
    let (live, ids) = filled(b.path());
    scores(&live);
    let mut delete = Batch::new();
    delete.delete(ids[0]);
    live.write("n", delete).unwrap();
    assert_eq!(after, scores(&live));
    assert!(after.iter().all(|(id, _)| *id != ids[0]));
}

#[test]
fn a_namespace_written_in_another_session_is_rebuilt() {
    // The snapshot of "n" is written, then another namespace is written: every snapshot goes,
    // and "n", unchanged, is rebuilt to the same scores.
    let dir = tempfile::tempdir().unwrap();
    let (engine, _) = filled(dir.path());
    let live = scores(&engine);
    engine.close().unwrap();
    let engine = open(dir.path());
    engine
        .ensure_namespace("other", NamespaceOptions::default())
        .unwrap();
    let mut batch = Batch::new();
    batch.put(NewRecord::new("cat cat cat"));
    engine.write("other", batch).unwrap();
    assert_eq!(scores(&engine), live);
    engine.close().unwrap();
    assert_eq!(scores(&open(dir.path())), live);
}
