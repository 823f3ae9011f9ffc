//! Namespace exports and imports: a namespace exported as JSON lines and imported into another
//! engine holds the same memory (equal digests, equal searches), keeps working, and a bad
//! entry anywhere leaves nothing behind.

use mb_engine::{Analyzer, Engine, Error, ExportEntry, NewRecord, RecordId};

use super::copy::{observed, open, populate, records, vector};

/// Every entry of `ns`, each through its JSON line and back.
fn export(e: &Engine, ns: &str) -> Vec<ExportEntry> {
    let mut lines = Vec::new();
    e.export_namespace(ns, |entry| {
        lines.push(serde_json::to_string(&entry).map_err(std::io::Error::other)?);
        Ok(())
    })
    .unwrap();
    lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn an_imported_namespace_is_the_exported_one_and_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let source = open(&dir.path().join("a"));
    let target = open(&dir.path().join("b"));
    // The target already holds another namespace with ids of its own.
    populate(&target, "other", Analyzer::Standard, 50);
    let other_digest = target.digest("other").unwrap();
    for (ns, analyzer) in [
        ("mcp/t/acme/memory/x", Analyzer::Standard),
        ("zh", Analyzer::Cjk),
    ] {
        populate(&source, ns, analyzer, 1500);
        let entries = export(&source, ns);
        assert!(matches!(&entries[0], ExportEntry::Namespace { name, .. } if name == ns));
        let (info, counts) = target
            .import_namespace(entries.into_iter().map(Ok))
            .unwrap();
        assert_eq!(info.analyzer, analyzer);
        assert_eq!(counts.records, source.count(ns).unwrap());
        assert_eq!(counts.state, 3);
        assert_eq!(target.digest(ns).unwrap(), source.digest(ns).unwrap());
        assert_eq!(observed(&target, ns), observed(&source, ns));

        // The state names the same records; new records never take an imported id.
        let first: RecordId = target.get_state(ns, "note/first").unwrap().unwrap();
        assert_eq!(
            target.get(ns, first).unwrap(),
            source.get(ns, first).unwrap()
        );
        let max = records(&source, ns).iter().map(|r| r.id).max().unwrap();
        let added = target
            .put(
                ns,
                NewRecord::new("after the move").with_vector("small", vector(7, 3)),
            )
            .unwrap();
        assert!(added > max);
        assert_eq!(
            target.search_text(ns, "move", 1).unwrap()[0].record.id,
            added
        );
    }
    assert_eq!(target.digest("other").unwrap(), other_digest);

    // Reopened, the imports are still there and the counter stays past the imported ids.
    let before = observed(&target, "zh");
    target.close().unwrap();
    let target = open(&dir.path().join("b"));
    assert_eq!(observed(&target, "zh"), before);
    let max = records(&target, "zh").iter().map(|r| r.id).max().unwrap();
    assert!(target.put("zh", NewRecord::new("again")).unwrap() > max);
}

#[test]
fn a_bad_entry_anywhere_imports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let source = open(&dir.path().join("a"));
    let target = open(&dir.path().join("b"));
    populate(&source, "ns", Analyzer::Standard, 40);
    let good = export(&source, "ns");
    let first_vector = good
        .iter()
        .position(|e| matches!(e, ExportEntry::Vector { .. }))
        .unwrap();
    let first_state = good
        .iter()
        .position(|e| matches!(e, ExportEntry::State { .. }))
        .unwrap();

    let mut cases: Vec<(&str, Vec<ExportEntry>, u64)> = Vec::new();
    let mut wrong_dimension = good.clone();
    if let ExportEntry::Vector { vector, .. } = &mut wrong_dimension[first_vector] {
        vector.push(0.5);
    }
    cases.push(("wrong dimension", wrong_dimension, first_vector as u64 + 1));
    let mut not_finite = good.clone();
    if let ExportEntry::Vector { vector, .. } = &mut not_finite[first_vector] {
        vector[0] = f32::NAN;
    }
    cases.push(("NaN", not_finite, first_vector as u64 + 1));
    let mut orphan = good.clone();
    if let ExportEntry::Vector { id, .. } = &mut orphan[first_vector] {
        *id = RecordId(999_999);
    }
    cases.push(("vector of no record", orphan, first_vector as u64 + 1));
    let mut bad_state = good.clone();
    if let ExportEntry::State { value, .. } = &mut bad_state[first_state] {
        value.push('x');
    }
    cases.push(("state not hex", bad_state, first_state as u64 + 1));
    let first_record = good
        .iter()
        .position(|e| matches!(e, ExportEntry::Record(_)))
        .unwrap();
    let mut twice = good.clone();
    twice.insert(first_record, good[first_record].clone());
    cases.push(("record twice", twice, first_record as u64 + 2));
    let mut second_header = good.clone();
    second_header.push(good[0].clone());
    cases.push(("second header", second_header, good.len() as u64 + 1));
    cases.push(("no header", good[1..].to_vec(), 1));

    for (what, entries, at) in cases {
        match target.import_namespace(entries.into_iter().map(Ok)) {
            Err(Error::InvalidImport { entry, .. }) => assert_eq!(entry, at, "{what}"),
            other => panic!("{what}: {other:?}"),
        }
        assert!(target.namespace("ns").is_err(), "{what} left a namespace");
    }
    // An error from the reader stops the import the same way.
    let failing = good
        .iter()
        .take(5)
        .cloned()
        .map(Ok)
        .chain([Err(Error::Background("the file ended early".into()))]);
    assert!(matches!(
        target.import_namespace(failing),
        Err(Error::Background(_))
    ));
    assert!(target.namespace("ns").is_err());

    // Nothing staged by the failures remains: the good import is exactly the source.
    target
        .import_namespace(good.clone().into_iter().map(Ok))
        .unwrap();
    assert_eq!(target.digest("ns").unwrap(), source.digest("ns").unwrap());
    assert!(matches!(
        target.import_namespace(good.into_iter().map(Ok)),
        Err(Error::NamespaceExists(_))
    ));
    target.close().unwrap();
    let target = open(&dir.path().join("b"));
    assert_eq!(observed(&target, "ns"), observed(&source, "ns"));
}
