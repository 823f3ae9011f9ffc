//! Tests of [`super`]: snapshots kept or deleted by sequence number, vector files beside the
//! statistics, and what a close writes.

use super::*;
use crate::vector::source::MemorySource;

fn stats_only(ns: u32, stats: &LexicalStats) -> NamespaceSnapshot<'_> {
    NamespaceSnapshot {
        ns,
        stats: Some(stats),
        vectors: Vec::new(),
    }
}

fn stats(text: &str) -> LexicalStats {
    let mut stats = LexicalStats::default();
    stats.add(&crate::namespace::Analyzer::Standard.analyze(text));
    stats
}

#[test]
fn snapshots_are_kept_only_at_their_sequence_number() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), false).unwrap());
    let vectors = dir.path().join("vectors");
    let open = |seq| Snapshots::open(&store, seq, vectors.clone(), true, None).unwrap();
    let snapshots = open(5);
    assert_eq!(snapshots.stats(&store, 1), None, "none yet");
    let one = stats("apple banana");
    snapshots.write(&store, 5, [stats_only(1, &one)]).unwrap();
    let reopened = open(5);
    assert_eq!(reopened.stats(&store, 1), Some(one.clone()));
    assert_eq!(reopened.stats(&store, 2), None);

    // A write invalidates them, in its own batch.
    let mut batch = StoreBatch::default();
    reopened.invalidate(&store, &mut batch).unwrap();
    store.write(batch).unwrap();
    reopened.invalidated();
    assert_eq!(reopened.stats(&store, 1), None);
    assert_eq!(
        store.get(Family::Meta, &stats_key(1)).unwrap(),
        None,
        "gone from disk"
    );

    // Written at 7, opened at 8 (a process wrote and never closed): deleted.
    snapshots.write(&store, 7, [stats_only(1, &one)]).unwrap();
    let stale = open(8);
    assert_eq!(stale.stats(&store, 1), None);
    assert_eq!(store.get(Family::Meta, &stats_key(1)).unwrap(), None);
    assert_eq!(store.get(Family::Meta, META_STATS_SEQ).unwrap(), None);

    // A snapshot that does not decode is ignored.
    snapshots.write(&store, 9, [stats_only(1, &one)]).unwrap();
    let mut batch = StoreBatch::default();
    batch.put(store.cf(Family::Meta).unwrap(), stats_key(1), b"garbage");
    store.write(batch).unwrap();
    assert_eq!(open(9).stats(&store, 1), None);
}

#[test]
fn vector_files_follow_the_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), false).unwrap());
    let vectors = dir.path().join("vectors");
    let open = |seq| Snapshots::open(&store, seq, vectors.clone(), true, None).unwrap();
    let mut collection = VectorCollection::new(4);
    collection.upsert(
        crate::record::RecordId(1),
        &crate::vector::seeded_unit(1, 4),
    );
    let one = stats("apple");
    let snapshot = |vectors| NamespaceSnapshot {
        ns: 3,
        stats: Some(&one),
        vectors,
    };
    open(5)
        .write(&store, 5, [snapshot(vec![("s", &collection)])])
        .unwrap();
    let reopened = open(5);
    let read = reopened.vectors(3, &MemorySource::none).unwrap();
    assert_eq!(read["s"].contents(), collection.contents());
    assert!(
        reopened.vectors(4, &MemorySource::none).is_none(),
        "no file, no snapshot"
    );

    // Kept at the next close when nothing wrote; deleted by the first write.
    let modified = |path: &Path| std::fs::metadata(path).unwrap().modified().unwrap();
    let before = modified(&vectors.join("3.vec"));
    reopened
        .write(&store, 5, [snapshot(vec![("s", &collection)])])
        .unwrap();
    assert_eq!(modified(&vectors.join("3.vec")), before, "not rewritten");
    reopened.invalidated();
    assert!(reopened.vectors(3, &MemorySource::none).is_none());
    assert!(!vectors.exists(), "deleted with the write");

    // Written at 7, opened at 8: deleted at open.
    reopened
        .write(&store, 7, [snapshot(vec![("s", &collection)])])
        .unwrap();
    assert!(vectors.join("3.vec").exists());
    assert!(open(8).vectors(3, &MemorySource::none).is_none());
    assert!(!vectors.exists());
}

#[test]
fn statistics_read_ahead_are_what_the_namespace_gets() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), false).unwrap());
    let vectors = dir.path().join("vectors");
    let (one, two) = (stats("apple banana"), stats("cherry"));
    Snapshots::open(&store, 5, vectors.clone(), true, None)
        .unwrap()
        .write(&store, 5, [stats_only(1, &one), stats_only(2, &one)])
        .unwrap();
    let put = |stats: &LexicalStats| {
        let mut batch = StoreBatch::default();
        let meta = store.cf(Family::Meta).unwrap();
        batch.put(meta, stats_key(1), stats.to_bytes());
        batch.put(meta, stats_key(2), stats.to_bytes());
        store.write(batch).unwrap();
    };
    let within = |budget| {
        put(&one);
        let mut snapshots = Snapshots::open(&store, 5, vectors.clone(), true, budget).unwrap();
        snapshots.start_decoding(&store);
        snapshots.warmup.wait();
        // Changed in the store after they were read ahead.
        put(&two);
        snapshots
    };
    let snapshots = within(None);
    assert_eq!(snapshots.stats(&store, 1), Some(one.clone()), "read ahead");
    assert_eq!(snapshots.stats(&store, 1), Some(two.clone()), "taken once");
    assert_eq!(snapshots.stats(&store, 2), Some(one.clone()));
    // A budget for one of the two.
    let snapshots = within(Some(one.to_bytes().len()));
    let got = [snapshots.stats(&store, 1), snapshots.stats(&store, 2)];
    assert!(
        got.contains(&Some(one)) && got.contains(&Some(two)),
        "{got:?}"
    );
}

#[test]
fn a_close_after_only_reads_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = dir.path().join("vectors");
    let (one, two) = (stats("apple banana"), stats("cherry"));
    {
        let store = Arc::new(Store::open(dir.path(), false).unwrap());
        let snapshots = Snapshots::open(&store, 5, vectors.clone(), true, None).unwrap();
        snapshots.write(&store, 5, [stats_only(1, &one)]).unwrap();
    }
    let reopen = || {
        let store = Arc::new(Store::open_for_reading(dir.path()).unwrap());
        let snapshots = Snapshots::open(&store, 5, vectors.clone(), true, None).unwrap();
        (store, snapshots)
    };

    // The statistics read from the snapshot are written back as they are: nothing to write.
    let (store, snapshots) = reopen();
    let read = snapshots.stats(&store, 1).unwrap();
    snapshots.write(&store, 5, [stats_only(1, &read)]).unwrap();
    assert!(
        !store.is_writable(),
        "the close opened the store for writing"
    );
    drop((store, snapshots));

    // Statistics not read from the snapshots (rebuilt, say) are written, and kept.
    let (store, snapshots) = reopen();
    snapshots
        .write(&store, 5, [stats_only(1, &one), stats_only(2, &two)])
        .unwrap();
    assert!(store.is_writable());
    drop((store, snapshots));
    let (store, snapshots) = reopen();
    assert_eq!(snapshots.stats(&store, 2), Some(two));
    assert_eq!(snapshots.stats(&store, 1), Some(one));
}
