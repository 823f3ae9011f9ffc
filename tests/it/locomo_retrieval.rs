//! The engine on real conversations: LoCoMo turns from `../shared/data/locomo` (skipped with a
//! message when that folder is absent, as on a user's machine).
//!
//! Each conversation is a namespace of "Speaker X says: ..." records (MemoryBench's BM25-M
//! memory text). Checks that BM25 retrieval finds the annotated evidence turns for a solid share
//! of questions, and that a conversation ranks identically whether it shares the engine with
//! the seven others or is alone.

use crate::common::{ingest, locomo, questions};
use memorybench::engine::{Engine, EngineOptions};

#[test]
fn bm25_finds_evidence_and_namespaces_are_isolated() {
    let Some(samples) = locomo() else { return };
    let dir = tempfile::tempdir().unwrap();
    let shared = Engine::open(dir.path().join("all"), EngineOptions::default()).unwrap();
    for (i, s) in samples.iter().enumerate() {
        ingest(&shared, &format!("locomo-{i}"), s);
    }
    let alone = Engine::open(dir.path().join("one"), EngineOptions::default()).unwrap();
    ingest(&alone, "locomo-0", &samples[0]);

    let (mut hit, mut total) = (0usize, 0usize);
    for (i, s) in samples.iter().enumerate() {
        let ns = format!("locomo-{i}");
        for (question, evidence) in questions(s) {
            let hits = shared.search_text(&ns, &question, 5).unwrap();
            total += 1;
            if hits.iter().any(|h| {
                evidence
                    .iter()
                    .any(|e| h.record.attribute("dia_id") == Some(e))
            }) {
                hit += 1;
            }
            if i == 0 {
                let solo = alone.search_text(&ns, &question, 5).unwrap();
                let key = |hs: &[memorybench::engine::Hit]| {
                    hs.iter()
                        .map(|h| (h.record.text.clone(), (h.score * 1e4).round() as i64))
                        .collect::<Vec<_>>()
                };
                assert_eq!(key(&hits), key(&solo), "{question}");
            }
        }
    }
    let rate = hit as f64 / total as f64;
    eprintln!("BM25 evidence hit rate @5 over {total} LoCoMo questions: {rate:.3}");
    assert!(total > 500);
    assert!(
        rate > 0.4,
        "BM25 found evidence in the top 5 for only {rate:.3} of questions"
    );
}
