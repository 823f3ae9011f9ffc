//! Per-namespace BM25: a namespace must rank exactly as Whoosh's BM25F over only its
//! documents, whatever other namespaces hold, before and after commits and deletes; and scores
//! follow Whoosh's BM25F formula (MemoryBench parity: its idf and its recorded document
//! lengths) by default.

use std::collections::HashMap;

use mb_engine::{Analyzer, Engine, EngineOptions, NamespaceOptions, NewRecord, RecordId};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const VOCABULARY: [&str; 24] = [
    "memory", "cat", "dog", "tea", "coffee", "marathon", "paris", "berlin", "guitar", "piano",
    "garden", "book", "movie", "friend", "sister", "birthday", "career", "painting", "hiking",
    "camping", "recipe", "concert", "museum", "beach",
];

fn random_text(rng: &mut StdRng, skew: usize) -> String {
    let len = rng.random_range(3..25);
    (0..len)
        .map(|_| {
            // Namespaces draw from differently skewed distributions so their statistics differ.
            let i = (rng.random_range(0..VOCABULARY.len()) + skew * rng.random_range(0..3))
                % VOCABULARY.len();
            VOCABULARY[i]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Scores of `query` on every document of `docs` by Whoosh's BM25F computed by hand with the
/// statistics of these documents only (documents without a query term score 0).
fn reference_scores(docs: &[String], query: &str) -> HashMap<String, f32> {
    let terms = |t: &str| -> Vec<String> {
        Analyzer::Standard
            .analyze(t)
            .into_iter()
            .map(|x| x.text)
            .collect()
    };
    let analyzed: Vec<Vec<String>> = docs.iter().map(|d| terms(d)).collect();
    let views: Vec<Vec<&str>> = analyzed
        .iter()
        .map(|d| d.iter().map(String::as_str).collect())
        .collect();
    let query_terms = terms(query);
    let query: Vec<&str> = query_terms.iter().map(String::as_str).collect();
    docs.iter()
        .zip(&views)
        .map(|(d, v)| (d.clone(), whoosh_bm25f(&views, v, &query)))
        .collect()
}

/// The engine's top 10 for each query are the reference's: each hit's score is the hand-computed
/// one, in descending order, and every document scoring clearly above the tenth is among them.
fn assert_same_ranking(engine: &Engine, ns: &str, live: &[String], queries: &[String]) {
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * b.abs().max(1.0);
    for q in queries {
        let reference = reference_scores(live, q);
        let got = engine.search_text(ns, q, 10).unwrap();
        let matching = reference.values().filter(|s| **s > 0.0).count();
        assert_eq!(got.len(), matching.min(10), "query {q:?}");
        for pair in got.windows(2) {
            assert!(pair[0].score >= pair[1].score, "query {q:?}: not sorted");
        }
        for hit in &got {
            let expected = reference[&hit.record.text];
            assert!(
                close(hit.score, expected),
                "query {q:?}: {:?} scored {} instead of {expected}",
                hit.record.text,
                hit.score
            );
        }
        let last = got.last().map_or(0.0, |h| h.score);
        for (text, score) in &reference {
            if *score > last && !close(*score, last) {
                assert!(
                    got.iter().any(|h| &h.record.text == text),
                    "query {q:?}: {text:?} ({score}) missing"
                );
            }
        }
    }
}

#[test]
fn namespace_ranks_as_if_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = EngineOptions::default();
    // Make commits explicit so both the committed and the in-memory paths are exercised.
    options.lexical_commit_interval = std::time::Duration::from_secs(3600);
    let engine = Engine::open(dir.path().join("e"), options).unwrap();
    for ns in ["a", "b", "c"] {
        engine
            .create_namespace(ns, NamespaceOptions::default())
            .unwrap();
    }
    let mut rng = StdRng::seed_from_u64(7);
    let mut a_docs: Vec<(RecordId, String)> = Vec::new();
    for i in 0..600 {
        // Interleave namespaces so their documents share segments.
        let t = random_text(&mut rng, 0);
        a_docs.push((engine.put("a", NewRecord::new(t.clone())).unwrap(), t));
        engine
            .put("b", NewRecord::new(random_text(&mut rng, 5)))
            .unwrap();
        if i % 3 == 0 {
            engine
                .put(
                    "c",
                    NewRecord::new(format!("{} {}", random_text(&mut rng, 9), "memory memory")),
                )
                .unwrap();
        }
        if i == 300 {
            engine.flush().unwrap();
        }
    }
    let queries: Vec<String> = (0..25)
        .map(|_| {
            let n = rng.random_range(1..5);
            (0..n)
                .map(|_| VOCABULARY[rng.random_range(0..VOCABULARY.len())])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .chain(["The cat AND \"dog\" title:memory".to_string()])
        .collect();

    let live = |docs: &[(RecordId, String)]| docs.iter().map(|d| d.1.clone()).collect::<Vec<_>>();
    // Half committed, half in the uncommitted overlay.
    assert_same_ranking(&engine, "a", &live(&a_docs), &queries);
    engine.flush().unwrap();
    assert_same_ranking(&engine, "a", &live(&a_docs), &queries);

    // Deletes and updates, first uncommitted, then committed.
    for i in (0..a_docs.len()).step_by(7).rev() {
        let (id, _) = a_docs.remove(i);
        assert!(engine.delete("a", id).unwrap());
    }
    for i in (0..a_docs.len()).step_by(11) {
        let t = random_text(&mut rng, 2);
        engine
            .update("a", a_docs[i].0, NewRecord::new(t.clone()))
            .unwrap();
        a_docs[i].1 = t;
    }
    assert_same_ranking(&engine, "a", &live(&a_docs), &queries);
    engine.flush().unwrap();
    assert_same_ranking(&engine, "a", &live(&a_docs), &queries);
    engine.close().unwrap();

    // And after reopening (statistics rebuilt from the store).
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    assert_same_ranking(&engine, "a", &live(&a_docs), &queries);
}

#[test]
fn query_syntax_is_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    engine
        .create_namespace("n", NamespaceOptions::default())
        .unwrap();
    engine.put("n", NewRecord::new("cats and dogs")).unwrap();
    engine
        .put("n", NewRecord::new("the title of the book"))
        .unwrap();
    for q in [
        "cats AND",
        "\"unbalanced",
        "title:",
        "NOT cats",
        "(dogs",
        "cats* ~2 ^3",
        "+-&&||!{}[]",
    ] {
        engine.search_text("n", q, 5).unwrap();
    }
    let hits = engine.search_text("n", "NOT cats", 5).unwrap();
    assert_eq!(
        hits[0].record.text, "cats and dogs",
        "NOT is an ordinary word, not an operator"
    );
    let hits = engine.search_text("n", "title:book", 5).unwrap();
    assert_eq!(hits[0].record.text, "the title of the book");
    assert!(engine.search_text("n", "", 5).unwrap().is_empty());
    assert!(
        engine.search_text("n", "the and of", 5).unwrap().is_empty(),
        "stop words only"
    );
}

#[test]
fn chinese_namespace_uses_word_segmentation() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    let cjk = {
        let mut built = NamespaceOptions::default();
        built.analyzer = Analyzer::Cjk;
        built
    };
    engine.create_namespace("zh", cjk).unwrap();
    engine
        .put("zh", NewRecord::new("合同纠纷应当依法处理"))
        .unwrap();
    engine
        .put("zh", NewRecord::new("今天天气很好，我们去公园散步"))
        .unwrap();
    let hits = engine.search_text("zh", "关于合同的问题", 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].record.text, "合同纠纷应当依法处理");
    // The standard analyzer keeps whole CJK runs, so the same query finds nothing there.
    engine
        .create_namespace("std", NamespaceOptions::default())
        .unwrap();
    engine
        .put("std", NewRecord::new("合同纠纷应当依法处理"))
        .unwrap();
    assert!(engine
        .search_text("std", "关于合同的问题", 5)
        .unwrap()
        .is_empty());
}

/// The length Whoosh records for a document of `n` terms: the smallest value of its one-byte
/// table `round((1.033^b - 1) * 27)`, b = 0..=255, that is at least `n`.
fn whoosh_recorded_length(n: usize) -> f64 {
    (0..256)
        .map(|b| ((1.033f64.powi(b) - 1.0) * 27.0).round())
        .find(|&length| length >= n as f64)
        .unwrap_or(106_374.0)
}

/// Whoosh BM25F (`K1 = 1.2`, `B = 0.75`, idf `ln(N / (n + 1)) + 1`, document lengths as
/// Whoosh records them, the exact average) computed by hand.
fn whoosh_bm25f(docs: &[Vec<&str>], doc: &[&str], query: &[&str]) -> f32 {
    let (k1, b) = (1.2f64, 0.75f64);
    let n_docs = docs.len() as f64;
    let avgdl = docs.iter().map(|d| d.len()).sum::<usize>() as f64 / n_docs;
    let length = whoosh_recorded_length(doc.len());
    query
        .iter()
        .map(|q| {
            let df = docs.iter().filter(|d| d.contains(q)).count() as f64;
            let tf = doc.iter().filter(|w| *w == q).count() as f64;
            let idf = (n_docs / (df + 1.0)).ln() + 1.0;
            idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * length / avgdl))
        })
        .sum::<f64>() as f32
}

#[test]
fn scores_follow_whoosh_bm25f() {
    let texts = [
        "tea garden tea ceremony",
        "coffee garden",
        "tea tea tea tea",
        "marathon training plan for october",
        "garden party with coffee and tea",
        // Eleven terms: Whoosh records twelve.
        "tea tasting notes from a long garden walk past coffee stalls near berlin station",
        "twenty words about garden design tea rooms coffee shops morning runs evening walks \
         weekend markets city parks river boats old bridges quiet squares",
    ];
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    engine
        .create_namespace("n", NamespaceOptions::default())
        .unwrap();
    for t in texts {
        engine.put("n", NewRecord::new(t)).unwrap();
    }
    let analyzed: Vec<Vec<String>> = texts
        .iter()
        .map(|t| {
            Analyzer::Standard
                .analyze(t)
                .into_iter()
                .map(|x| x.text)
                .collect()
        })
        .collect();
    let docs: Vec<Vec<&str>> = analyzed
        .iter()
        .map(|d| d.iter().map(String::as_str).collect())
        .collect();
    for query in ["tea garden", "coffee", "tea tea marathon"] {
        let q: Vec<&str> = query.split(' ').collect();
        let hits = engine.search_text("n", query, 10).unwrap();
        assert!(!hits.is_empty());
        for hit in hits {
            let i = texts.iter().position(|t| *t == hit.record.text).unwrap();
            let expected = whoosh_bm25f(&docs, &docs[i], &q);
            assert!(
                (hit.score - expected).abs() < 1e-4,
                "{query:?} on {:?}: {} vs {expected}",
                texts[i],
                hit.score
            );
        }
        engine.flush().unwrap();
    }
}
