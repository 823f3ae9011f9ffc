//! BM25 statistics that a reopened namespace loads only when a text search or a write needs
//! them (`deferred_stats.rs`): searched by vector alone, its statistics are never decoded, and
//! whatever comes first after that (a write to it, a write elsewhere that deletes the
//! snapshots, a close) leaves text scores exactly those of statistics kept live all along.

use std::path::Path;

use mb_engine::{Batch, Engine, NamespaceOptions, NewRecord, RecordId, Space};

use crate::stats_snapshot::{open, scores, TEXTS};

/// A store holding the statistics snapshot tests' [`TEXTS`] with vectors in namespace `n`, and
/// an empty namespace `m`; the ids in order.
fn filled(dir: &Path) -> (Engine, Vec<RecordId>) {
    let engine = open(dir);
    engine.create_space(Space::new("s", 3)).unwrap();
    for name in ["n", "m"] {
        engine
            .ensure_namespace(name, NamespaceOptions::default())
            .unwrap();
    }
    let records = TEXTS
        .iter()
        .enumerate()
        .map(|(i, text)| NewRecord::new(*text).with_vector("s", vec![1.0, i as f32, 0.5]));
    let ids = engine.put_many("n", records).unwrap();
    (engine, ids)
}

/// Searches `n` by vector only, which loads it without its statistics.
fn search_vectors(engine: &Engine) {
    let hits = engine.search_vector("n", "s", &[1.0, 2.0, 0.5], 3).unwrap();
    assert_eq!(hits.len(), 3);
}

/// A store whose snapshot of `n` was written at a close after a text search.
fn snapshotted(dir: &Path) -> (Vec<RecordId>, Vec<(RecordId, f32)>) {
    let (engine, ids) = filled(dir);
    let live = scores(&engine);
    engine.close().unwrap();
    (ids, live)
}

#[test]
fn a_session_of_vector_searches_keeps_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let (_, live) = snapshotted(dir.path());
    let engine = open(dir.path());
    search_vectors(&engine);
    engine.close().unwrap();
    let engine = open(dir.path());
    assert_eq!(scores(&engine), live);
}

#[test]
fn a_write_to_the_namespace_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let (ids, _) = snapshotted(dir.path());
    let engine = open(dir.path());
    search_vectors(&engine);
    let mut delete = Batch::new();
    delete.delete(ids[1]);
    engine.write("n", delete).unwrap();
    let after = scores(&engine);

    let reference = tempfile::tempdir().unwrap();
    let (live, ids) = filled(reference.path());
    scores(&live);
    let mut delete = Batch::new();
    delete.delete(ids[1]);
    live.write("n", delete).unwrap();
    assert_eq!(after, scores(&live));
    engine.close().unwrap();
    assert_eq!(scores(&open(dir.path())), after, "and after a reopen");
}

#[test]
fn a_write_elsewhere_leaves_the_statistics_exact() {
    let dir = tempfile::tempdir().unwrap();
    let (_, live) = snapshotted(dir.path());
    let engine = open(dir.path());
    search_vectors(&engine);
    // Deletes every snapshot, the one `n` had not read yet included.
    engine.put("m", NewRecord::new("cat cat cat")).unwrap();
    assert_eq!(scores(&engine), live);
    engine.close().unwrap();
    let engine = open(dir.path());
    assert_eq!(scores(&engine), live, "after a reopen");
    // Loaded for vectors after the snapshots went: nothing is written for its statistics at
    // the close, and they are analysed again when next needed.
    engine.put("m", NewRecord::new("dog")).unwrap();
    engine.close().unwrap();
    let engine = open(dir.path());
    search_vectors(&engine);
    engine.close().unwrap();
    assert_eq!(scores(&open(dir.path())), live, "analysed again");
}
