//! Deleting a record deletes its vectors in every space, and an update that drops a space
//! drops that space's vector: by id, by filter, before and after a reopen.

use mb_engine::{Engine, EngineOptions, Filter, NamespaceOptions, NewRecord, RecordId, Space};

/// A record with a vector in both spaces and an attribute saying which group it is in.
fn record(i: usize, group: &str) -> NewRecord {
    let x = i as f32;
    NewRecord::new(format!("record {i}"))
        .with_attribute("group", group)
        .with_vector("a", vec![1.0, x, 0.0])
        .with_vector("b", vec![x, 1.0, 1.0, 0.0])
}

/// The spaces in which record `id` still has a vector.
fn spaces_of(engine: &Engine, id: RecordId) -> Vec<String> {
    let mut spaces: Vec<String> = engine
        .get_vectors("ns", id)
        .unwrap()
        .into_iter()
        .map(|(space, _)| space)
        .collect();
    spaces.sort();
    spaces
}

#[test]
fn deleted_and_replaced_records_leave_no_vector_behind() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), EngineOptions::default()).unwrap();
    engine.create_space(Space::new("a", 3)).unwrap();
    engine.create_space(Space::new("b", 4)).unwrap();
    // A space no record of the namespace uses: deletes must not trip over it.
    engine.create_space(Space::new("unused", 2)).unwrap();
    engine
        .create_namespace("ns", NamespaceOptions::default())
        .unwrap();
    let ids: Vec<RecordId> = (0..30)
        .map(|i| {
            let group = if i % 3 == 0 { "gone" } else { "kept" };
            engine.put("ns", record(i, group)).unwrap()
        })
        .collect();
    let (deleted, updated) = (ids[1], ids[2]);
    assert_eq!(spaces_of(&engine, deleted), ["a", "b"]);

    engine.delete("ns", deleted).unwrap();
    engine
        .update(
            "ns",
            updated,
            NewRecord::new("now only in a")
                .with_attribute("group", "kept")
                .with_vector("a", vec![0.0, 0.0, 1.0]),
        )
        .unwrap();
    let filter = Filter::new().attribute("group", "gone");
    assert_eq!(engine.delete_where("ns", &filter).unwrap(), 10);

    let check = |engine: &Engine| {
        assert!(spaces_of(engine, deleted).is_empty(), "deleted by id");
        assert_eq!(spaces_of(engine, updated), ["a"], "the update dropped b");
        for (i, id) in ids.iter().enumerate() {
            let expected: &[&str] = match i {
                _ if *id == deleted || i % 3 == 0 => &[],
                _ if *id == updated => &["a"],
                _ => &["a", "b"],
            };
            assert_eq!(spaces_of(engine, *id), expected, "record {i}");
        }
        let found = engine
            .search_vector("ns", "b", &[1.0, 1.0, 1.0, 0.0], 30)
            .unwrap();
        assert_eq!(
            found.len(),
            30 - 10 - 2,
            "neither deleted nor updated records in b"
        );
    };
    check(&engine);
    engine.close().unwrap();
    let engine = Engine::open(dir.path(), EngineOptions::default()).unwrap();
    check(&engine);
}

/// The ids of the records `filter` matches, ascending.
fn ids_where(engine: &Engine, filter: &Filter) -> Vec<RecordId> {
    let mut ids: Vec<RecordId> = engine
        .records_where("ns", filter)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_run_of_consecutive_deletes_leaves_its_neighbours_whole() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), EngineOptions::default()).unwrap();
    engine.create_space(Space::new("a", 3)).unwrap();
    engine.create_space(Space::new("b", 4)).unwrap();
    engine
        .create_namespace("ns", NamespaceOptions::default())
        .unwrap();
    // Records 20..60 are one run (one range tombstone per family), 70, 75 and 90 scattered
    // (point tombstones); every record also has a pair ("tag", "x") whose entries run past
    // both ends of the run.
    let gone = |i: usize| (20..60).contains(&i) || [70, 75, 90].contains(&i);
    let ids: Vec<RecordId> = (0..100)
        .map(|i| {
            let group = if gone(i) { "gone" } else { "kept" };
            engine
                .put("ns", record(i, group).with_attribute("tag", "x"))
                .unwrap()
        })
        .collect();
    assert_eq!(
        engine
            .delete_where("ns", &Filter::new().attribute("group", "gone"))
            .unwrap(),
        43
    );
    // In one batch: a run of 16 deleted, the record after it updated, a new one written.
    let mut batch = mb_engine::Batch::new();
    for id in &ids[0..16] {
        batch.delete(*id);
    }
    batch.update(ids[16], record(16, "kept").with_attribute("tag", "x"));
    batch.put(record(100, "kept").with_attribute("tag", "x"));
    let new = engine.write("ns", batch).unwrap().ids[0];

    let check = |engine: &Engine| {
        let kept: Vec<RecordId> = (0..100)
            .filter(|i| !gone(*i) && *i >= 16)
            .map(|i| ids[i])
            .chain([new])
            .collect();
        assert_eq!(engine.count("ns").unwrap(), kept.len() as u64);
        for (i, id) in ids.iter().enumerate() {
            let here = kept.contains(id);
            assert_eq!(engine.get("ns", *id).unwrap().is_some(), here, "record {i}");
            let spaces: &[&str] = if here { &["a", "b"] } else { &[] };
            assert_eq!(spaces_of(engine, *id), spaces, "vectors of record {i}");
        }
        assert_eq!(
            ids_where(engine, &Filter::new().attribute("tag", "x")),
            kept
        );
        assert_eq!(
            ids_where(engine, &Filter::new().attribute("group", "gone")),
            []
        );
        let found = engine
            .search_vector("ns", "a", &[1.0, 1.0, 0.0], 200)
            .unwrap();
        assert_eq!(found.len(), kept.len());
    };
    check(&engine);
    engine.close().unwrap();
    let engine = Engine::open(dir.path(), EngineOptions::default()).unwrap();
    check(&engine);
}
