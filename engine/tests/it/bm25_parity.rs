//! Per-namespace BM25: a namespace must rank exactly as a tantivy index holding only its
//! documents, whatever other namespaces hold, before and after commits and deletes; and scores
//! follow Whoosh's BM25F formula (MemoryBench parity) by default.

use mb_engine::lexical::{AnalyzerTokenizer, Idf};
use mb_engine::{Analyzer, Engine, EngineOptions, NamespaceOptions, NewRecord, RecordId};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED};
use tantivy::{doc, Index, Term};

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

/// Ranking of `query` in a standalone tantivy index over `docs` with tantivy's own statistics,
/// each term boosted from Lucene's to Whoosh's idf.
fn reference_ranking(docs: &[String], query: &str, k: usize) -> Vec<(String, f32)> {
    let mut builder = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer("mb_standard")
        .set_index_option(IndexRecordOption::WithFreqs);
    let text = builder.add_text_field(
        "text",
        TextOptions::default().set_indexing_options(indexing),
    );
    let stored = builder.add_text_field("stored", STORED);
    let index = Index::create_in_ram(builder.build());
    index
        .tokenizers()
        .register("mb_standard", AnalyzerTokenizer(Analyzer::Standard));
    let mut writer = index.writer_with_num_threads(1, 20_000_000).unwrap();
    for d in docs {
        writer
            .add_document(doc!(text => d.as_str(), stored => d.as_str()))
            .unwrap();
    }
    writer.commit().unwrap();
    let searcher = index.reader().unwrap().searcher();
    let clauses: Vec<(Occur, Box<dyn Query>)> = Analyzer::Standard
        .analyze(query)
        .into_iter()
        .map(|t| {
            let term = Term::from_field_text(text, &t.text);
            let (n, total) = (searcher.doc_freq(&term).unwrap(), searcher.num_docs());
            let boost = Idf::Whoosh.value(n, total) / Idf::Lucene.value(n, total);
            let q: Box<dyn Query> = Box::new(BoostQuery::new(
                Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                boost,
            ));
            (Occur::Should, q)
        })
        .collect();
    let top = searcher
        .search(
            &BooleanQuery::new(clauses),
            &TopDocs::with_limit(k).order_by_score(),
        )
        .unwrap();
    top.into_iter()
        .map(|(score, addr)| {
            let d: tantivy::TantivyDocument = searcher.doc(addr).unwrap();
            let s = d
                .get_first(stored)
                .and_then(|v| tantivy::schema::Value::as_str(&v))
                .unwrap();
            (s.to_string(), score)
        })
        .collect()
}

fn assert_same_ranking(engine: &Engine, ns: &str, live: &[String], queries: &[String]) {
    for q in queries {
        let expected = reference_ranking(live, q, 10);
        let got: Vec<(String, f32)> = engine
            .search_text(ns, q, 10)
            .unwrap()
            .into_iter()
            .map(|h| (h.record.text, h.score))
            .collect();
        assert_eq!(got.len(), expected.len(), "query {q:?}");
        for (g, e) in got.iter().zip(&expected) {
            assert!(
                (g.1 - e.1).abs() <= 1e-4 * e.1.abs().max(1.0),
                "query {q:?}: score {g:?} vs {e:?}"
            );
        }
        // Equal scores may be ordered differently; compare texts as score-grouped multisets.
        let key = |v: &[(String, f32)]| {
            let mut v: Vec<(i64, String)> = v
                .iter()
                .map(|(t, s)| ((s * 1e4).round() as i64, t.clone()))
                .collect();
            v.sort();
            v
        };
        let (g, e) = (key(&got), key(&expected));
        // The last score group may be cut at k differently; compare all groups above it.
        let cutoff = e.first().map_or(0, |x| x.0);
        let above = |v: &[(i64, String)]| {
            v.iter()
                .filter(|x| x.0 > cutoff)
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(above(&g), above(&e), "query {q:?}");
    }
}

#[test]
fn namespace_ranks_as_if_alone() {
    let dir = tempfile::tempdir().unwrap();
    let options = EngineOptions {
        // Make commits explicit so both the committed and the in-memory paths are exercised.
        lexical_commit_interval: std::time::Duration::from_secs(3600),
        ..EngineOptions::default()
    };
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
    let cjk = NamespaceOptions {
        analyzer: Analyzer::Cjk,
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

/// Whoosh BM25F (`K1 = 1.2`, `B = 0.75`, idf `ln(N / (n + 1)) + 1`) computed by hand.
fn whoosh_bm25f(docs: &[Vec<&str>], doc: &[&str], query: &[&str]) -> f32 {
    let (k1, b) = (1.2f64, 0.75f64);
    let n_docs = docs.len() as f64;
    let avgdl = docs.iter().map(|d| d.len()).sum::<usize>() as f64 / n_docs;
    query
        .iter()
        .map(|q| {
            let df = docs.iter().filter(|d| d.contains(q)).count() as f64;
            let tf = doc.iter().filter(|w| *w == q).count() as f64;
            let idf = (n_docs / (df + 1.0)).ln() + 1.0;
            idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * doc.len() as f64 / avgdl))
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
    ];
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    engine
        .create_namespace("n", NamespaceOptions::default())
        .unwrap();
    for t in texts {
        engine.put("n", NewRecord::new(t)).unwrap();
    }
    let analysed: Vec<Vec<String>> = texts
        .iter()
        .map(|t| {
            Analyzer::Standard
                .analyze(t)
                .into_iter()
                .map(|x| x.text)
                .collect()
        })
        .collect();
    let docs: Vec<Vec<&str>> = analysed
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
