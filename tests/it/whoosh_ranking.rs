//! BM25 with Whoosh query syntax against Whoosh itself, on real LoCoMo questions.
//!
//! MemoryBench's BM25 baselines index each turn in Whoosh and search with
//! `QueryParser("content", schema, group=OrGroup).parse(question)`. This test indexes the same
//! turns in the engine and in Whoosh 2.7.4 (the setup venv), asks every evidence-bearing
//! question of the LoCoMo conversations of `../shared/data` (skipped when absent) through both,
//! and compares the top-5 rankings and scores. It also reports how often each syntax finds an
//! evidence turn in the top 5, which is the effect of upstream's parsing.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use memorybench::engine::{Engine, EngineOptions, QuerySyntax};
use serde_json::json;

use crate::common::{ingest, locomo, questions, turns};

/// Indexes each sample's documents in a Whoosh RAM index and answers its queries with
/// upstream's parser: `[[ [doc number, score], ... ] per query ] per sample`.
const WHOOSH: &str = r#"
import json, sys
from whoosh.fields import Schema, TEXT, ID
from whoosh.filedb.filestore import RamStorage
from whoosh.qparser import QueryParser, OrGroup
out = []
for sample in json.load(sys.stdin):
    schema = Schema(doc_id=ID(stored=True, unique=True), content=TEXT(stored=True))
    index = RamStorage().create_index(schema)
    writer = index.writer()
    for i, text in enumerate(sample["docs"]):
        writer.add_document(doc_id=str(i), content=text)
    writer.commit()
    ranked = []
    with index.searcher() as searcher:
        parser = QueryParser("content", index.schema, group=OrGroup)
        for q in sample["queries"]:
            hits = searcher.search(parser.parse(q), limit=5)
            ranked.append([[int(h["doc_id"]), h.score] for h in hits])
    out.append(ranked)
json.dump(out, sys.stdout)
"#;

fn whoosh_python() -> Option<PathBuf> {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/venv/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import whoosh"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        mb_core::test_data::skip(&format!(
            "{} cannot import whoosh (run `bash scripts/setup.sh`)",
            python.display()
        ));
    }
    ok.then_some(python)
}

#[test]
fn whoosh_syntax_ranks_locomo_questions_as_whoosh_does() {
    let Some(samples) = locomo() else { return };
    let Some(python) = whoosh_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    let mut input = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        ingest(&engine, &format!("locomo-{i}"), sample);
        let docs: Vec<String> = turns(sample).into_iter().map(|(_, text)| text).collect();
        let queries: Vec<String> = questions(sample).into_iter().map(|(q, _)| q).collect();
        input.push(json!({"docs": docs, "queries": queries}));
    }
    let mut child = Command::new(python)
        .args(["-c", WHOOSH])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&input).unwrap().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the Whoosh side failed");
    let expected: Vec<Vec<Vec<(usize, f64)>>> = serde_json::from_slice(&output.stdout).unwrap();

    let (mut compared, mut same_ranking, mut same_set) = (0usize, 0usize, 0usize);
    let mut found = [0usize; 2];
    let mut worst_score_error = 0f64;
    for (i, sample) in samples.iter().enumerate() {
        let ns = format!("locomo-{i}");
        let dia_ids: Vec<String> = turns(sample).into_iter().map(|(d, _)| d).collect();
        for ((question, evidence), whoosh) in questions(sample).into_iter().zip(&expected[i]) {
            let ours = engine
                .search_query(&ns, &question, QuerySyntax::Whoosh, 5)
                .unwrap();
            let ours: Vec<(usize, f64)> = ours
                .iter()
                .map(|h| {
                    let dia = h.record.attribute("dia_id").unwrap();
                    let position = dia_ids.iter().position(|d| d == dia).unwrap();
                    (position, f64::from(h.score))
                })
                .collect();
            compared += 1;
            let ids = |r: &[(usize, f64)]| r.iter().map(|h| h.0).collect::<Vec<_>>();
            if ids(&ours) == ids(whoosh) {
                same_ranking += 1;
                for (a, b) in ours.iter().zip(whoosh) {
                    worst_score_error =
                        worst_score_error.max((a.1 - b.1).abs() / b.1.abs().max(1e-9));
                }
            }
            let mut sorted = (ids(&ours), ids(whoosh));
            sorted.0.sort_unstable();
            sorted.1.sort_unstable();
            if sorted.0 == sorted.1 {
                same_set += 1;
            }
            let plain = engine.search_text(&ns, &question, 5).unwrap();
            let hit = |found_ids: Vec<usize>| {
                found_ids
                    .iter()
                    .any(|&p| evidence.iter().any(|e| *e == dia_ids[p]))
            };
            found[0] += usize::from(hit(ids(&ours)));
            found[1] += usize::from(hit(plain
                .iter()
                .filter_map(|h| {
                    let dia = h.record.attribute("dia_id")?;
                    dia_ids.iter().position(|d| d == dia)
                })
                .collect()));
        }
    }
    let share = |n: usize| n as f64 / compared as f64;
    eprintln!(
        "{compared} LoCoMo questions: identical top-5 ranking {:.4}, identical top-5 set {:.4}, \
         worst relative score error on identical rankings {worst_score_error:.2e}; evidence in \
         the top 5: whoosh syntax {:.3}, plain {:.3}",
        share(same_ranking),
        share(same_set),
        share(found[0]),
        share(found[1]),
    );
    assert!(compared > 500);
    assert!(share(same_ranking) > 0.985, "rankings differ from Whoosh's");
    assert!(share(same_set) > 0.99, "top-5 sets differ from Whoosh's");
    assert!(worst_score_error < 0.02, "scores differ from Whoosh's");
}
