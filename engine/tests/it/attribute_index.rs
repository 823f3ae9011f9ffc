//! The attribute index behind `records_where` and `delete_where` (`attributes.rs`): after
//! every kind of change (updates that change or drop attributes, deletes, an update then a
//! delete in one batch, a copy, an import, a dropped and recreated namespace, a reopen), a
//! filter finds exactly the records a look at every record finds.

use mb_engine::{Batch, Engine, EngineOptions, Filter, NamespaceOptions, NewRecord, RecordId};

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(dir, EngineOptions::default()).unwrap()
}

fn record(i: u64) -> NewRecord {
    NewRecord::new(format!("note {i}"))
        .with_attribute("kind", ["a", "b", "c"][(i % 3) as usize])
        .with_attribute("user", format!("u{}", i % 5))
}

fn filters() -> Vec<Filter> {
    let mut all = vec![Filter::new()];
    for kind in ["a", "b", "c", "d"] {
        all.push(Filter::new().attribute("kind", kind));
        for user in ["u0", "u3"] {
            all.push(
                Filter::new()
                    .attribute("kind", kind)
                    .attribute("user", user),
            );
        }
    }
    all.push(Filter::new().attribute("moved", "yes"));
    all
}

/// Every filter lists, in `namespace`, what a look at every record finds.
fn assert_index_agrees(engine: &Engine, namespace: &str) {
    for filter in filters() {
        let expected: Vec<RecordId> = engine
            .records(namespace)
            .unwrap()
            .map(Result::unwrap)
            .filter(|r| filter.matches(r))
            .map(|r| r.id)
            .collect();
        let listed: Vec<RecordId> = engine
            .records_where(namespace, &filter)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(listed, expected, "{namespace} {filter:?}");
    }
}

#[test]
fn filters_find_exactly_the_matching_records_after_every_kind_of_change() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir.path().join("a"));
    engine
        .create_namespace("ns", NamespaceOptions::default())
        .unwrap();
    // 900 records: each kind's 300 are read in two halves on two threads (from 256).
    let mut batch = Batch::new();
    for i in 0..900 {
        batch.put(record(i));
    }
    let ids = engine.write("ns", batch).unwrap().ids;
    let mut change = Batch::new();
    for (n, id) in ids.iter().enumerate().take(60) {
        match n % 4 {
            // A changed attribute, a dropped one, a new one.
            0 => change.update(*id, NewRecord::new("moved").with_attribute("kind", "d")),
            1 => change.update(*id, NewRecord::new("bare")),
            2 => change.update(*id, record(n as u64 + 1).with_attribute("moved", "yes")),
            _ => change.delete(*id),
        };
    }
    // Updated, then deleted, in one batch.
    change.update(
        ids[100],
        NewRecord::new("brief").with_attribute("kind", "d"),
    );
    change.delete(ids[100]);
    engine.write("ns", change).unwrap();
    assert_index_agrees(&engine, "ns");

    let kind_b = Filter::new().attribute("kind", "b");
    let matching = engine.records_where("ns", &kind_b).unwrap().len();
    assert!(matching > 50);
    assert_eq!(engine.delete_where("ns", &kind_b).unwrap(), matching);
    assert!(engine.records_where("ns", &kind_b).unwrap().is_empty());
    assert_index_agrees(&engine, "ns");

    engine.copy_namespace("ns", "copy").unwrap();
    assert_index_agrees(&engine, "copy");

    let mut exported = Vec::new();
    engine
        .export_namespace("ns", |entry| {
            exported.push(entry);
            Ok(())
        })
        .unwrap();
    let other = open(&dir.path().join("b"));
    other
        .import_namespace(exported.into_iter().map(Ok))
        .unwrap();
    assert_index_agrees(&other, "ns");

    engine.drop_namespace("ns").unwrap();
    engine
        .create_namespace("ns", NamespaceOptions::default())
        .unwrap();
    engine.put("ns", record(1)).unwrap();
    assert_index_agrees(&engine, "ns");
    engine.close().unwrap();

    let engine = open(&dir.path().join("a"));
    assert_index_agrees(&engine, "ns");
    assert_index_agrees(&engine, "copy");
}
