//! Attribute-filtered searches: exactly the unfiltered ranking restricted to matching records,
//! however rare the matches are.

use mb_engine::{Engine, EngineOptions, Filter, HybridQuery, NamespaceOptions, NewRecord, Space};

const RECORDS: usize = 400;

/// A namespace where every record mentions "cat" and has a vector, and one record in `every`
/// carries `kind = rare` (the rest `kind = common`).
fn engine_with(every: usize) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("store"), EngineOptions::default()).unwrap();
    engine
        .create_namespace("ns", NamespaceOptions::default())
        .unwrap();
    engine.create_space(Space::new("s", 2)).unwrap();
    for i in 0..RECORDS {
        let kind = if i % every == 0 { "rare" } else { "common" };
        let angle = i as f32 / RECORDS as f32;
        let text = format!("cat number {i} {}", "cat ".repeat(i % 7));
        engine
            .put(
                "ns",
                NewRecord::new(text)
                    .with_attribute("kind", kind)
                    .with_attribute("parity", (i % 2).to_string())
                    .with_vector("s", vec![angle.cos(), angle.sin()]),
            )
            .unwrap();
    }
    (dir, engine)
}

/// The unfiltered ranking of everything, restricted to `filter`, cut at `k`.
fn expected(all: Vec<mb_engine::Hit>, filter: &Filter, k: usize) -> Vec<u64> {
    all.into_iter()
        .filter(|h| filter.matches(&h.record))
        .take(k)
        .map(|h| h.record.id.0)
        .collect()
}

fn ids(hits: Vec<mb_engine::Hit>) -> Vec<u64> {
    hits.into_iter().map(|h| h.record.id.0).collect()
}

#[test]
fn filtered_searches_equal_the_full_ranking_restricted() {
    for every in [1, 3, 97] {
        let (_dir, engine) = engine_with(every);
        let rare = Filter::new().attribute("kind", "rare");
        let both = Filter::new()
            .attribute("kind", "common")
            .attribute("parity", "1");
        for filter in [&rare, &both, &Filter::new()] {
            let k = 5;
            let text = engine.search_text("ns", "cat", RECORDS).unwrap();
            let got = engine.search_text_filtered("ns", "cat", k, filter).unwrap();
            assert_eq!(ids(got), expected(text, filter, k), "text, 1 in {every}");

            let query = [0.3f32, 0.9];
            let vector = engine.search_vector("ns", "s", &query, RECORDS).unwrap();
            let got = engine
                .search_vector_filtered("ns", "s", &query, k, filter)
                .unwrap();
            assert_eq!(
                ids(got),
                expected(vector, filter, k),
                "vector, 1 in {every}"
            );

            let mut hybrid = HybridQuery::new("cat", "s", query.to_vec(), RECORDS);
            hybrid.candidates = Some(RECORDS);
            let all = engine.search_hybrid("ns", &hybrid).unwrap();
            hybrid.k = k;
            let got = engine
                .search_hybrid_filtered("ns", &hybrid, filter)
                .unwrap();
            assert_eq!(ids(got), expected(all, filter, k), "hybrid, 1 in {every}");
        }
    }
}

#[test]
fn a_filter_nothing_matches_returns_nothing() {
    let (_dir, engine) = engine_with(3);
    let none = Filter::new().attribute("kind", "missing");
    assert!(engine
        .search_text_filtered("ns", "cat", 5, &none)
        .unwrap()
        .is_empty());
    assert!(engine
        .search_vector_filtered("ns", "s", &[1.0, 0.0], 5, &none)
        .unwrap()
        .is_empty());
}

#[test]
fn rare_matches_are_all_found() {
    let (_dir, engine) = engine_with(97);
    let rare = Filter::new().attribute("kind", "rare");
    let hits = engine
        .search_vector_filtered("ns", "s", &[1.0, 0.0], 100, &rare)
        .unwrap();
    // Records 0, 97, 194, 291, 388.
    assert_eq!(hits.len(), RECORDS.div_ceil(97));
    assert!(hits
        .iter()
        .all(|h| h.record.attribute("kind") == Some("rare")));
}

/// Searches that see every record's score, for comparing two namespaces.
fn rankings(engine: &Engine) -> Vec<Vec<(u64, f32)>> {
    let scored = |hits: Vec<mb_engine::Hit>| -> Vec<(u64, f32)> {
        hits.into_iter().map(|h| (h.record.id.0, h.score)).collect()
    };
    vec![
        scored(engine.search_text("ns", "cat number 12", RECORDS).unwrap()),
        scored(
            engine
                .search_vector("ns", "s", &[0.3, 0.7], RECORDS)
                .unwrap(),
        ),
    ]
}

/// Each record's BM25 score for a query, by text (texts are unique; ids are not compared).
fn text_scores(engine: &Engine) -> Vec<(String, f32)> {
    let hits = engine.search_text("ns", "cat number 12", RECORDS).unwrap();
    let mut scores: Vec<(String, f32)> =
        hits.into_iter().map(|h| (h.record.text, h.score)).collect();
    scores.sort_by(|a, b| a.0.cmp(&b.0));
    scores
}

/// A fresh engine holding only the records `engine` holds, so its statistics were never
/// reduced by a delete.
fn survivors_only(engine: &Engine) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let fresh = Engine::open(dir.path().join("store"), EngineOptions::default()).unwrap();
    fresh
        .create_namespace("ns", NamespaceOptions::default())
        .unwrap();
    for record in engine.records("ns").unwrap() {
        fresh
            .put("ns", NewRecord::new(record.unwrap().text))
            .unwrap();
    }
    (dir, fresh)
}

#[test]
fn records_where_lists_and_delete_where_deletes_the_matching_ids() {
    for filter in [
        Filter::new().attribute("kind", "rare"),
        // Two thirds of the records: enough for their terms to be counted during the write.
        Filter::new().attribute("kind", "common"),
        Filter::new()
            .attribute("kind", "rare")
            .attribute("parity", "0"),
        Filter::new().attribute("kind", "none"),
        Filter::new(),
    ] {
        let (_a, by_filter) = engine_with(3);
        let (_b, by_ids) = engine_with(3);
        let matching: Vec<mb_engine::RecordId> = by_ids
            .records("ns")
            .unwrap()
            .map(Result::unwrap)
            .filter(|r| filter.matches(r))
            .map(|r| r.id)
            .collect();
        let mut batch = mb_engine::Batch::new();
        for id in &matching {
            batch.delete(*id);
        }
        by_ids.write("ns", batch).unwrap();

        // Listing by the filter finds exactly those records, whole.
        let listed = by_filter.records_where("ns", &filter).unwrap();
        let expected: Vec<mb_engine::Record> = by_filter
            .records("ns")
            .unwrap()
            .map(Result::unwrap)
            .filter(|r| filter.matches(r))
            .collect();
        assert_eq!(listed, expected, "{filter:?}");
        assert_eq!(listed.len(), matching.len());

        // A search loads the namespace's statistics, which the delete must then reduce.
        rankings(&by_filter);
        let deleted = by_filter.delete_where("ns", &filter).unwrap();
        assert_eq!(deleted, matching.len(), "{filter:?}");
        assert_eq!(by_filter.count("ns").unwrap(), (RECORDS - deleted) as u64);
        // (Digests differ: the two engines stamped their records at different times.)
        let kept = |e: &Engine| -> Vec<String> {
            e.records("ns")
                .unwrap()
                .map(Result::unwrap)
                .map(|r| format!("{} {} {:?}", r.id, r.text, r.attributes))
                .collect()
        };
        assert_eq!(kept(&by_filter), kept(&by_ids));
        assert_eq!(rankings(&by_filter), rankings(&by_ids), "{filter:?}");
        let (_c, fresh) = survivors_only(&by_filter);
        assert_eq!(
            text_scores(&by_filter),
            text_scores(&fresh),
            "BM25 statistics after deleting {filter:?}"
        );
        assert_eq!(by_filter.delete_where("ns", &filter).unwrap(), 0);
    }
}

/// An engine whose collections get a graph from 500 vectors on, searched with the narrowest
/// beam (so that a graph's answers differ from the exact ones), or none (`graphs` false).
fn graph_engine(dir: &std::path::Path, graphs: bool) -> Engine {
    let mut options = EngineOptions::default();
    options.hnsw.threshold = if graphs { 500 } else { usize::MAX };
    options.hnsw.ef_search = 1;
    let engine = Engine::open(dir, options).unwrap();
    engine
        .create_namespace("ns", NamespaceOptions::default())
        .unwrap();
    engine.create_space(Space::new("s", 16)).unwrap();
    let mut batch = mb_engine::Batch::new();
    for i in 0..3000u32 {
        let vector: Vec<f32> = (0..16u32)
            .map(|d| ((i * 31 + d * 17) as f32 * 0.618).sin())
            .collect();
        batch.put(
            NewRecord::new(format!("record {i}"))
                .with_attribute("user", (i % 40).to_string())
                .with_attribute("half", (i % 2).to_string())
                .with_vector("s", vector),
        );
    }
    engine.write("ns", batch).unwrap();
    // The first search loads the namespace and starts the graph's build; flush waits for it.
    engine.search_vector("ns", "s", &[1.0; 16], 1).unwrap();
    engine.flush().unwrap();
    engine
}

#[test]
fn a_rare_filter_over_a_graph_is_searched_exactly() {
    let (with, without) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (graph, exact) = (
        graph_engine(with.path(), true),
        graph_engine(without.path(), false),
    );
    let mut approximate = 0;
    for q in 0..20u32 {
        let query: Vec<f32> = (0..16u32).map(|d| ((q * 7 + d) as f32).cos()).collect();
        let everything = exact.search_vector("ns", "s", &query, 3000).unwrap();
        let user = Filter::new().attribute("user", (q % 40).to_string());
        let got = graph
            .search_vector_filtered("ns", "s", &query, 10, &user)
            .unwrap();
        assert_eq!(
            ids(got),
            expected(everything.clone(), &user, 10),
            "query {q}"
        );
        // The graph alone misses some of the true top 10: the exactness above is the
        // filtered path's own.
        let unfiltered = graph.search_vector("ns", "s", &query, 10).unwrap();
        approximate += usize::from(ids(unfiltered) != expected(everything, &Filter::new(), 10));

        // Half the namespace matches: too many to score one by one, so the ranking widens.
        let half = Filter::new().attribute("half", (q % 2).to_string());
        let got = graph
            .search_vector_filtered("ns", "s", &query, 10, &half)
            .unwrap();
        assert_eq!(got.len(), 10);
        assert!(got.iter().all(|h| half.matches(&h.record)), "query {q}");
    }
    assert!(approximate > 0, "the graph answered every query exactly");
}
