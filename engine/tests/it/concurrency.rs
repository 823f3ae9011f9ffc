//! Many threads writing and searching at once: every acknowledged write is visible to the
//! writer's next read, nothing is lost or duplicated, and namespaces do not leak into each other.

use std::collections::HashSet;
use std::sync::Arc;

use mb_engine::{Engine, EngineOptions, NamespaceOptions, NewRecord, Space};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn parallel_writers_and_readers_stay_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let options = {
        let mut built = EngineOptions::default();
        built.lexical_commit_interval = std::time::Duration::from_millis(20);
        built
    };
    let engine = Arc::new(Engine::open(dir.path().join("e"), options).unwrap());
    engine.create_space(Space::new("s", 16)).unwrap();
    engine
        .create_namespace("shared", NamespaceOptions::default())
        .unwrap();
    const THREADS: usize = 4;
    const WRITES: usize = 400;
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                let own = format!("user{t}");
                engine
                    .create_namespace(&own, NamespaceOptions::default())
                    .unwrap();
                let mut ids = Vec::new();
                for i in 0..WRITES {
                    let token = format!("t{t}w{i}");
                    // A random direction per write: its nearest neighbour is itself.
                    let mut rng = StdRng::seed_from_u64((t * WRITES + i) as u64);
                    let v: Vec<f32> = (0..16).map(|_| rng.random_range(-1.0..1.0)).collect();
                    let id = engine
                        .put(
                            &own,
                            NewRecord::new(format!("note {token}")).with_vector("s", v.clone()),
                        )
                        .unwrap();
                    engine
                        .put("shared", NewRecord::new(format!("shared {token}")))
                        .unwrap();
                    // Read-your-writes: the very next search sees the record.
                    let hits = engine.search_text(&own, &token, 2).unwrap();
                    assert_eq!(hits.len(), 1, "{token}");
                    assert_eq!(hits[0].record.id, id);
                    assert_eq!(engine.search_text("shared", &token, 2).unwrap().len(), 1);
                    let nearest = engine.search_vector(&own, "s", &v, 1).unwrap();
                    assert_eq!(nearest[0].record.id, id);
                    if i % 10 == 9 {
                        let victim = ids.remove(0);
                        assert!(engine.delete(&own, victim).unwrap());
                        assert!(engine.get(&own, victim).unwrap().is_none());
                    }
                    ids.push(id);
                    // Other namespaces' documents never show up here.
                    for h in engine.search_text(&own, "note shared", 20).unwrap() {
                        assert!(h.record.text.contains(&format!("t{t}w")));
                    }
                }
                ids
            })
        })
        .collect();
    let mut all = HashSet::new();
    for (t, h) in handles.into_iter().enumerate() {
        let ids = h.join().unwrap();
        let own = format!("user{t}");
        assert_eq!(engine.count(&own).unwrap(), ids.len() as u64);
        let stored: Vec<_> = engine
            .records(&own)
            .unwrap()
            .map(|r| r.unwrap().id)
            .collect();
        let mut expected = ids.clone();
        expected.sort();
        assert_eq!(stored, expected);
        for id in ids {
            assert!(all.insert(id), "id {id} handed out twice");
        }
    }
    assert_eq!(engine.count("shared").unwrap(), (THREADS * WRITES) as u64);
    assert_eq!(
        engine
            .search_text("shared", "shared", 10_000)
            .unwrap()
            .len(),
        THREADS * WRITES
    );
}

/// Two writers on namespaces of their own, with lexical commits landing between their writes;
/// after a reopen (without `close`) every record is found, and new ids and sequence numbers
/// continue above all of them.
#[test]
fn parallel_writers_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e");
    let options = || {
        let mut built = EngineOptions::default();
        // Commits land between writes of the two threads.
        built.lexical_commit_interval = std::time::Duration::from_millis(5);
        built
    };
    const WRITES: usize = 300;
    let engine = Engine::open(&path, options()).unwrap();
    for t in 0..2 {
        engine
            .create_namespace(&format!("w{t}"), NamespaceOptions::default())
            .unwrap();
    }
    let ids: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let engine = &engine;
                scope.spawn(move || {
                    (0..WRITES)
                        .map(|i| {
                            engine
                                .put(&format!("w{t}"), NewRecord::new(format!("fact t{t}x{i}")))
                                .unwrap()
                                .0
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let last_seq = engine.last_seq();
    // Dropped without `close`: the lexical index is caught up from the change log on reopen.
    drop(engine);
    let engine = Engine::open(&path, options()).unwrap();
    let highest = ids.iter().flatten().copied().max().unwrap();
    let all: HashSet<u64> = ids.iter().flatten().copied().collect();
    assert_eq!(all.len(), 2 * WRITES, "ids are unique");
    for (t, own) in ids.iter().enumerate() {
        for (i, id) in own.iter().enumerate() {
            let hits = engine
                .search_text(&format!("w{t}"), &format!("t{t}x{i}"), 1)
                .unwrap();
            assert_eq!(hits[0].record.id.0, *id, "t{t}x{i}");
        }
    }
    let next = engine.put("w0", NewRecord::new("one more")).unwrap();
    assert!(next.0 > highest);
    assert!(engine.last_seq() > last_seq);
    engine.close().unwrap();
}
