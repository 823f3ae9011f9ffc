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
