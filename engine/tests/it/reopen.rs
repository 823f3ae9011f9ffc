//! Everything written is there after close and reopen, and the indexes agree with the store,
//! including when the lexical index has to be rebuilt from scratch.

use std::collections::BTreeMap;
use std::path::Path;

use mb_engine::{
    Analyzer, Batch, Engine, EngineOptions, NamespaceOptions, NewRecord, Record, RecordId, Space,
};

fn snapshot(e: &Engine) -> BTreeMap<String, Vec<Record>> {
    e.namespaces()
        .into_iter()
        .map(|ns| {
            (
                ns.name.clone(),
                e.records(&ns.name).unwrap().map(Result::unwrap).collect(),
            )
        })
        .collect()
}

/// Checks that both indexes find every stored record by its own content.
fn assert_indexes_agree(e: &Engine, snap: &BTreeMap<String, Vec<Record>>) {
    for (ns, records) in snap {
        assert_eq!(e.count(ns).unwrap(), records.len() as u64);
        for r in records {
            let unique = r.attribute("token").unwrap();
            let hits = e.search_text(ns, unique, 2).unwrap();
            assert_eq!(hits.len(), 1, "{ns}: {unique}");
            assert_eq!(&hits[0].record, r);
            let v = vector_for(r.id);
            let nearest = e.search_vector(ns, "s", &v, 1).unwrap();
            assert_eq!(nearest[0].record.id, r.id);
        }
    }
}

fn vector_for(id: RecordId) -> Vec<f32> {
    let x = id.0 as f32;
    vec![x.sin(), x.cos(), (x * 0.5).sin(), 1.0]
}

/// Puts a record that [`assert_indexes_agree`] can find: a unique token, and a vector derived
/// from its id (set by an update, once the id is known) so the check can recompute it.
fn put_tracked(e: &Engine, ns: &str, token: String, text: String, created_at_ms: i64) {
    let id = e
        .put(
            ns,
            NewRecord::new(text)
                .with_attribute("token", token)
                .with_created_at_ms(created_at_ms),
        )
        .unwrap();
    let r = e.get(ns, id).unwrap().unwrap();
    let updated = NewRecord {
        text: r.text,
        body: Some(format!("body of {id}")),
        attributes: r.attributes,
        created_at_ms: Some(r.created_at_ms),
        vectors: vec![("s".into(), vector_for(id))],
    };
    e.update(ns, id, updated).unwrap();
}

fn populate(e: &Engine) {
    e.create_space(Space::new("s", 4)).unwrap();
    e.create_namespace("en", NamespaceOptions::default())
        .unwrap();
    e.create_namespace("zh", {
        let mut built = NamespaceOptions::default();
        built.analyzer = Analyzer::Cjk;
        built
    })
    .unwrap();
    e.create_namespace("gone", NamespaceOptions::default())
        .unwrap();
    for i in 0..300u64 {
        for ns in ["en", "zh", "gone"] {
            let token = format!("uniq{ns}{i}");
            let text = if ns == "zh" {
                format!("记忆 {token} 法律问题")
            } else {
                format!("memory {token} about things")
            };
            put_tracked(e, ns, token, text, i as i64);
        }
    }
    let victims: Vec<RecordId> = e
        .records("en")
        .unwrap()
        .map(|r| r.unwrap().id)
        .step_by(4)
        .collect();
    let mut batch = Batch::new();
    for id in victims {
        batch.delete(id);
    }
    batch
        .put_state("profile", &vec!["likes tea".to_string()])
        .unwrap();
    e.write("en", batch).unwrap();
    e.put_state("zh", "heat/7", &3.5f64).unwrap();
    e.drop_namespace("gone").unwrap();
}

fn reopen(path: &Path) -> Engine {
    Engine::open(path, EngineOptions::default()).unwrap()
}

#[test]
fn reopen_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e");
    let e = reopen(&path);
    populate(&e);
    let before = snapshot(&e);
    assert_eq!(before["en"].len(), 225);
    assert!(before.keys().eq(["en", "zh"].iter()));
    assert_indexes_agree(&e, &before);
    let seq = e.last_seq();
    e.close().unwrap();

    let e = reopen(&path);
    assert_eq!(snapshot(&e), before);
    assert_eq!(e.last_seq(), seq);
    assert_indexes_agree(&e, &before);
    assert_eq!(
        e.get_state::<Vec<String>>("en", "profile")
            .unwrap()
            .unwrap(),
        ["likes tea"]
    );
    assert_eq!(e.get_state::<f64>("zh", "heat/7").unwrap(), Some(3.5));
    assert_eq!(e.state_keys("zh", "heat/").unwrap(), ["heat/7"]);
    assert!(matches!(
        e.count("gone"),
        Err(mb_engine::Error::UnknownNamespace(_))
    ));
    // Insertion order and the record fields survive.
    let en = &before["en"];
    assert!(en.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(
        en[0].body.as_deref(),
        Some(format!("body of {}", en[0].id).as_str())
    );
    assert_eq!(en[0].content(), en[0].body.as_deref().unwrap());
    // A dropped namespace's name can be reused and starts empty.
    e.create_namespace("gone", NamespaceOptions::default())
        .unwrap();
    assert_eq!(e.count("gone").unwrap(), 0);
    assert!(e.search_text("gone", "memory", 5).unwrap().is_empty());
}

#[test]
fn missing_or_corrupt_lexical_index_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e");
    let e = reopen(&path);
    populate(&e);
    let before = snapshot(&e);
    e.close().unwrap();

    std::fs::remove_dir_all(path.join("lexical")).unwrap();
    let e = reopen(&path);
    assert_indexes_agree(&e, &before);
    e.close().unwrap();

    std::fs::write(path.join("lexical").join("meta.json"), b"{ not json").unwrap();
    let e = reopen(&path);
    assert_indexes_agree(&e, &before);
    assert_eq!(snapshot(&e), before);
    e.close().unwrap();

    // A segment's file gone (issue 76, D9: a missing `.pos` file left every text search
    // failing with tantivy's "Data corrupted ... Has the schema been modified?").
    for extension in ["pos", "idx", "term", "fieldnorm"] {
        let mut removed = 0;
        for entry in std::fs::read_dir(path.join("lexical")).unwrap() {
            let file = entry.unwrap().path();
            if file.extension().is_some_and(|x| x == extension) {
                std::fs::remove_file(&file).unwrap();
                removed += 1;
            }
        }
        assert!(removed > 0, "no .{extension} file to remove");
        let e = reopen(&path);
        assert_indexes_agree(&e, &before);
        e.close().unwrap();
    }
}

#[test]
fn an_engine_in_use_is_refused_before_its_lexical_index_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e");
    let e = reopen(&path);
    populate(&e);
    let before = snapshot(&e);
    e.flush().unwrap();
    // What an opener would take for a damaged index, and rebuild, if it read it.
    let meta = path.join("lexical").join("meta.json");
    std::fs::write(&meta, b"{ not json").unwrap();
    match Engine::open(&path, EngineOptions::default()) {
        Err(mb_engine::Error::InUse { .. }) => {}
        Err(other) => panic!("expected InUse, got {other}"),
        Ok(_) => panic!("a second engine opened a directory in use"),
    }
    assert_eq!(
        std::fs::read(&meta).unwrap(),
        b"{ not json",
        "the refused opener rebuilt the holder's lexical index"
    );
    // The holder goes on, and its records come back whole.
    e.close().unwrap();
    let e = reopen(&path);
    assert_indexes_agree(&e, &before);
    assert_eq!(snapshot(&e), before);
}

/// The number of segments of the lexical index on disk.
fn lexical_segments(path: &Path) -> usize {
    let meta = std::fs::read_to_string(path.join("lexical").join("meta.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    meta["segments"].as_array().unwrap().len()
}

/// The ids and scores of a search that many records match.
fn ranking(e: &Engine) -> Vec<(RecordId, f32)> {
    e.search_text("en", "memory about things more", 500)
        .unwrap()
        .into_iter()
        .map(|h| (h.record.id, h.score))
        .collect()
}

#[test]
fn merging_the_lexical_segments_changes_no_search_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e");
    let e = reopen(&path);
    populate(&e);
    // Each flush commits a segment of its own.
    for round in 0..3 {
        e.flush().unwrap();
        for i in 0..20 {
            let token = format!("more{round}x{i}");
            put_tracked(&e, "en", token.clone(), format!("more memory {token}"), i);
        }
    }
    e.flush().unwrap();
    assert!(lexical_segments(&path) > 1);
    let before = (ranking(&e), snapshot(&e));

    e.merge_lexical_segments().unwrap();
    assert_eq!(lexical_segments(&path), 1);
    assert_eq!((ranking(&e), snapshot(&e)), before);
    assert_indexes_agree(&e, &before.1);
    // Writes after the merge are found, and the merged index reopens with everything.
    let id = e.put("en", NewRecord::new("written later")).unwrap();
    assert_eq!(e.search_text("en", "later", 1).unwrap()[0].record.id, id);
    e.close().unwrap();
    let e = reopen(&path);
    assert_eq!(e.search_text("en", "later", 1).unwrap()[0].record.id, id);
    e.delete("en", id).unwrap();
    assert_eq!(ranking(&e), before.0);
    assert_indexes_agree(&e, &before.1);
}

/// A prefix's namespaces are listed in name order, without the ones beside it, before and after
/// a reopen, and a dropped one is gone from the list.
#[test]
fn namespaces_under_a_prefix_are_listed_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "t/u",
        "t/u/agent/b",
        "t/u/agent/a",
        "t/ua",
        "t/v",
        "s/u",
        "t",
    ];
    let under = |e: &Engine, prefix: &str| -> Vec<String> {
        e.namespaces_under(prefix)
            .into_iter()
            .map(|info| info.name)
            .collect()
    };
    {
        let e = Engine::open(dir.path(), EngineOptions::default()).unwrap();
        for name in names {
            e.create_namespace(name, NamespaceOptions::default())
                .unwrap();
        }
        assert_eq!(under(&e, "t/u/"), ["t/u/agent/a", "t/u/agent/b"]);
        assert_eq!(
            under(&e, "t/u"),
            ["t/u", "t/u/agent/a", "t/u/agent/b", "t/ua"]
        );
        assert_eq!(under(&e, "x").len(), 0);
        assert_eq!(under(&e, "").len(), names.len());
    }
    let e = Engine::open(dir.path(), EngineOptions::default()).unwrap();
    assert_eq!(under(&e, "t/u/"), ["t/u/agent/a", "t/u/agent/b"]);
    e.drop_namespace("t/u/agent/a").unwrap();
    assert_eq!(under(&e, "t/u/"), ["t/u/agent/b"]);
    let all: Vec<String> = e.namespaces().into_iter().map(|info| info.name).collect();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);
}
