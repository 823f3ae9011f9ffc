//! Many namespaces under a memory budget for derived state: the least recently searched are
//! evicted, searches after an eviction equal those of an engine that never evicted, and writes
//! to an evicted namespace are found.

use mb_engine::{Engine, EngineOptions, NamespaceOptions, NewRecord, Space};

const NAMESPACES: usize = 40;
const RECORDS: usize = 30;
const DIM: usize = 16;

fn vector(ns: usize, i: usize) -> Vec<f32> {
    (0..DIM)
        .map(|d| (((ns * 31 + i * 7 + d * 13) % 17) as f32 - 8.0) / 8.0 + 0.01)
        .collect()
}

fn open(dir: &std::path::Path, budget: Option<usize>) -> Engine {
    let mut options = EngineOptions::default();
    options.derived_memory_budget = budget;
    Engine::open(dir, options).unwrap()
}

fn fill(engine: &Engine) {
    engine.create_space(Space::new("s", DIM)).unwrap();
    for ns in 0..NAMESPACES {
        let name = format!("user{ns}");
        engine
            .create_namespace(&name, NamespaceOptions::default())
            .unwrap();
        let records = (0..RECORDS).map(|i| {
            NewRecord::new(format!(
                "user {ns} note {i} topic{} word{}",
                i % 5,
                (ns + i) % 11
            ))
            .with_vector("s", vector(ns, i))
        });
        engine.put_many(&name, records).unwrap();
    }
}

/// Every namespace's text and vector results, searched in order.
fn results(engine: &Engine) -> Vec<Vec<(u64, String)>> {
    (0..NAMESPACES)
        .map(|ns| {
            let name = format!("user{ns}");
            let text = engine.search_text(&name, "topic3 word7 note", 5).unwrap();
            let near = engine.search_vector(&name, "s", &vector(ns, 3), 5).unwrap();
            text.into_iter()
                .chain(near)
                .map(|h| (h.record.id.0, format!("{:.5}", h.score)))
                .collect()
        })
        .collect()
}

#[test]
fn a_budget_bounds_resident_state_and_changes_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let unbounded = open(&dir.path().join("unbounded"), None);
    fill(&unbounded);
    let expected = results(&unbounded);
    let whole = unbounded.resident();
    assert_eq!(whole.namespaces, NAMESPACES);
    assert_eq!(whole.evictions, 0);
    let one = whole.bytes / NAMESPACES;

    let budget = one * 6;
    let bounded = open(&dir.path().join("bounded"), Some(budget));
    fill(&bounded);
    for round in 0..2 {
        assert_eq!(results(&bounded), expected, "round {round}");
        let resident = bounded.resident();
        assert!(resident.bytes <= budget, "{resident:?} over {budget}");
        assert!(
            resident.namespaces < NAMESPACES && resident.namespaces >= 5,
            "{resident:?}"
        );
    }
    assert!(bounded.resident().evictions >= (2 * NAMESPACES - 6) as u64);

    // A write to an evicted namespace is found when it is searched again.
    bounded
        .put(
            "user0",
            NewRecord::new("a brand new zebra memory").with_vector("s", vector(0, 99)),
        )
        .unwrap();
    let hits = bounded.search_text("user0", "zebra", 1).unwrap();
    assert_eq!(hits[0].record.text, "a brand new zebra memory");
    bounded.drop_namespace("user1").unwrap();
    assert!(bounded.resident().bytes <= budget);
}

#[test]
fn the_namespace_in_use_stays_even_over_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), Some(1));
    fill(&engine);
    let hits = engine
        .search_vector("user5", "s", &vector(5, 2), 3)
        .unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(engine.resident().namespaces, 1);
    engine.search_text("user6", "note", 3).unwrap();
    assert_eq!(engine.resident().namespaces, 1);
}
