//! Vector collections written at close and read back at the next open (`vectors/{ns}.vec`,
//! `snapshot.rs`): a reopened namespace answers exactly as the live one did, a write after the
//! snapshot deletes it, a damaged file is passed over for the store, and an HNSW graph comes
//! back with its vectors.

use std::path::Path;

use mb_engine::{Batch, Engine, EngineOptions, NamespaceOptions, NewRecord, RecordId, Space};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn open(dir: &Path) -> Engine {
    Engine::open(dir, EngineOptions::default()).unwrap()
}

fn unit(seed: u64, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim)
        .map(|i| ((seed * 31 + i as u64) as f32 * 0.7).sin())
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

/// A namespace of 300 records with vectors in two spaces (every third only in `a`), some
/// deleted and one changed; the ids of the records kept.
fn filled(dir: &Path) -> (Engine, Vec<RecordId>) {
    let engine = open(dir);
    engine.create_space(Space::new("a", 8)).unwrap();
    engine.create_space(Space::new("b", 4)).unwrap();
    engine
        .ensure_namespace("n", NamespaceOptions::default())
        .unwrap();
    let mut batch = Batch::new();
    for i in 0..300u64 {
        let mut record = NewRecord::new(format!("record {i}")).with_vector("a", unit(i, 8));
        if i % 3 != 0 {
            record = record.with_vector("b", unit(i + 1000, 4));
        }
        batch.put(record);
    }
    let mut ids = engine.write("n", batch).unwrap().ids;
    let mut change = Batch::new();
    for id in ids.drain(10..20) {
        change.delete(id);
    }
    change.update(
        ids[0],
        NewRecord::new("changed").with_vector("a", unit(7777, 8)),
    );
    engine.write("n", change).unwrap();
    (engine, ids)
}

/// One query's hits.
type Answers = Vec<(RecordId, f32)>;

/// Every answer of ten queries in each space.
fn answers(engine: &Engine) -> Vec<Answers> {
    let mut all = Vec::new();
    for (space, dim) in [("a", 8), ("b", 4)] {
        for q in 0..10 {
            let hits = engine
                .search_vector("n", space, &unit(q * 17 + 5, dim), 7)
                .unwrap();
            all.push(hits.iter().map(|h| (h.record.id, h.score)).collect());
        }
    }
    all
}

fn vector_file(dir: &Path) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir.join("vectors"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one namespace, one file: {files:?}");
    files[0].clone()
}

#[test]
fn a_reopened_namespace_answers_as_the_live_one() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _) = filled(dir.path());
    let live = answers(&engine);
    engine.close().unwrap();
    assert!(vector_file(dir.path()).exists());
    let engine = open(dir.path());
    assert_eq!(answers(&engine), live, "after one close");
    engine.close().unwrap();
    assert_eq!(answers(&open(dir.path())), live, "after two");
}

#[test]
fn a_write_after_the_snapshot_deletes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, ids) = filled(dir.path());
    answers(&engine);
    engine.close().unwrap();
    let engine = open(dir.path());
    let mut change = Batch::new();
    change.delete(ids[1]);
    change.put(NewRecord::new("new").with_vector("a", unit(5, 8)));
    engine.write("n", change).unwrap();
    assert!(!dir.path().join("vectors").exists(), "deleted by the write");
    let live = answers(&engine);
    assert!(live.iter().flatten().all(|(id, _)| *id != ids[1]));
    engine.close().unwrap();
    assert_eq!(answers(&open(dir.path())), live);
}

/// Bytes after a vector file's body: the checksum of all but the graphs' codes, then theirs.
const TRAILER: usize = 8;

/// A closed store's answers, and the store (in `dir`) reopened after `change` rewrote its
/// vector file, with its answers.
fn answers_after_rewriting_the_file(
    dir: &Path,
    change: impl FnOnce(&mut Vec<u8>),
) -> (Vec<Answers>, Engine, Vec<Answers>) {
    let (engine, _) = filled(dir);
    let live = answers(&engine);
    engine.close().unwrap();
    let file = vector_file(dir);
    let mut bytes = std::fs::read(&file).unwrap();
    change(&mut bytes);
    std::fs::write(&file, bytes).unwrap();
    let engine = open(dir);
    let reopened = answers(&engine);
    (live, engine, reopened)
}

#[test]
fn a_damaged_file_is_passed_over_for_the_store_and_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let (live, engine, reopened) = answers_after_rewriting_the_file(dir.path(), |bytes| {
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
    });
    assert_eq!(reopened, live);
    let left = std::fs::read_dir(dir.path().join("vectors"))
        .unwrap()
        .count();
    assert_eq!(left, 0, "the refused file is deleted");
    engine.close().unwrap();
    let rewritten = std::fs::read(vector_file(dir.path())).unwrap();
    // No graph at this size, so no codes: the first checksum covers the whole body, and the
    // codes' is that of nothing.
    let body = rewritten.len() - TRAILER;
    assert_eq!(
        crc32fast::hash(&rewritten[..body]).to_le_bytes(),
        rewritten[body..body + 4],
        "a sound file again after the next close"
    );
    assert_eq!(rewritten[body + 4..], crc32fast::hash(&[]).to_le_bytes());
    assert_eq!(answers(&open(dir.path())), live);
}

#[test]
fn the_file_is_what_a_reopen_reads() {
    // A vector changed in the file, with a checksum to match, changes the answers: the
    // reopened namespace was read from the file, not from the store.
    let dir = tempfile::tempdir().unwrap();
    let (live, _engine, reopened) = answers_after_rewriting_the_file(dir.path(), |bytes| {
        let body = bytes.len() - TRAILER;
        bytes[body - 400..body].fill(0);
        let crc = crc32fast::hash(&bytes[..body]);
        bytes[body..body + 4].copy_from_slice(&crc.to_le_bytes());
    });
    assert_ne!(reopened, live);
}

#[test]
fn without_vector_snapshots_no_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _) = filled(dir.path());
    let live = answers(&engine);
    engine.close().unwrap();
    assert!(dir.path().join("vectors").exists());
    let mut options = EngineOptions::default();
    options.vector_snapshots = false;
    let engine = Engine::open(dir.path(), options).unwrap();
    assert!(!dir.path().join("vectors").exists(), "deleted at open");
    assert_eq!(answers(&engine), live);
    engine.close().unwrap();
    assert!(
        !dir.path().join("vectors").exists(),
        "none written at close"
    );
}

/// An engine whose collections get an HNSW graph from `threshold` vectors on, searched
/// with the narrowest beam (so that the graph's answers are its own, not the exact ones).
fn open_with_graphs(dir: &Path, threshold: usize) -> Engine {
    let mut options = EngineOptions::default();
    options.hnsw.threshold = threshold;
    options.hnsw.ef_search = 1;
    Engine::open(dir, options).unwrap()
}

/// A random unit vector of `dim`.
fn random_unit(rng: &mut StdRng, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

/// The top 10 of 50 random queries.
fn graph_answers(engine: &Engine) -> Vec<Answers> {
    let mut rng = StdRng::seed_from_u64(99);
    (0..50)
        .map(|_| {
            let hits = engine
                .search_vector("n", "a", &random_unit(&mut rng, 32), 10)
                .unwrap();
            hits.iter().map(|h| (h.record.id, h.score)).collect()
        })
        .collect()
}

/// Writes 3 000 records with random 32-d vectors (from `seed`) into namespace `n`, space `a`.
fn write_random_vectors(engine: &Engine, seed: u64) {
    engine.create_space(Space::new("a", 32)).unwrap();
    engine
        .ensure_namespace("n", NamespaceOptions::default())
        .unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut batch = Batch::new();
    for i in 0..3000u64 {
        batch
            .put(NewRecord::new(format!("record {i}")).with_vector("a", random_unit(&mut rng, 32)));
    }
    engine.write("n", batch).unwrap();
}

#[test]
fn a_graph_is_kept_with_the_vectors_unless_hnsw_is_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_with_graphs(dir.path(), 500);
    write_random_vectors(&engine, 7);
    // The first search loads the namespace and starts its graph build; flush waits for it.
    graph_answers(&engine);
    engine.flush().unwrap();
    let live = graph_answers(&engine);
    engine.close().unwrap();

    let exact = graph_answers(&open_with_graphs(dir.path(), usize::MAX));
    assert_ne!(live, exact, "the graph's answers are its own");
    let engine = open_with_graphs(dir.path(), 500);
    assert_eq!(
        graph_answers(&engine),
        live,
        "searched through the graph kept in the file, its points scored from the store"
    );
    // Flush waits for the points' vectors to be loaded into memory.
    engine.flush().unwrap();
    assert_eq!(graph_answers(&engine), live, "and once they are in memory");
    engine.close().unwrap();
    assert_eq!(
        graph_answers(&open_with_graphs(dir.path(), 500)),
        live,
        "and again"
    );
}

#[test]
fn a_graph_built_after_a_reopen_is_kept_by_the_next_close() {
    let dir = tempfile::tempdir().unwrap();
    // Written and closed without a graph: the file keeps the vectors only.
    let engine = open_with_graphs(dir.path(), usize::MAX);
    write_random_vectors(&engine, 11);
    let exact = graph_answers(&engine);
    engine.close().unwrap();

    // Reopened with graphs and only read: the first search starts a build, flush waits for it.
    let engine = open_with_graphs(dir.path(), 500);
    graph_answers(&engine);
    engine.flush().unwrap();
    let live = graph_answers(&engine);
    assert_ne!(live, exact, "the graph's answers are its own");
    engine.close().unwrap();

    // No record changed, yet the close wrote the graph: the next open searches through it
    // from its first query instead of exactly while building it again.
    assert_eq!(
        graph_answers(&open_with_graphs(dir.path(), 500)),
        live,
        "the graph came back from the file"
    );
}
