//! BM25 with upstream's query syntax against Whoosh itself, per query, on LoCoMo dev.
//!
//! MemoryBench's BM25-M indexes every turn of a conversation (`Speaker X says: ...`) and reads
//! each question with Whoosh's `QueryParser(..., group=OrGroup)`. This program stores the 8
//! development conversations of `../shared/data/locomo/locomo10-dev.json` one namespace each,
//! asks every question of each conversation through `Engine::search_query(.., Whoosh, 5)` and as
//! plain text, then runs the same documents and questions through Whoosh 2.7.4 (the setup venv,
//! `.cache/venv`, `RamStorage` as upstream), timing parse + search per query on both sides.
//! Index building is not timed. Usage: `cargo run --release -p mb-stores-bench --bin
//! whoosh_queries [-- ROUNDS]` (default 5 timed rounds after one warm-up round).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mb_engine::{Engine, EngineOptions, NamespaceOptions, NewRecord, QuerySyntax};
use mb_stores_bench::{mean_ms, percentiles};
use serde_json::{json, Value};

/// Times Whoosh's parse + search per query over the same rounds; prints a JSON list of
/// per-query seconds.
const WHOOSH: &str = r#"
import json, sys, time
from whoosh.fields import Schema, TEXT, ID
from whoosh.filedb.filestore import RamStorage
from whoosh.qparser import QueryParser, OrGroup
req = json.load(sys.stdin)
times = []
for sample in req["samples"]:
    schema = Schema(doc_id=ID(stored=True, unique=True), content=TEXT(stored=True))
    index = RamStorage().create_index(schema)
    writer = index.writer()
    for i, text in enumerate(sample["docs"]):
        writer.add_document(doc_id=str(i), content=text)
    writer.commit()
    with index.searcher() as searcher:
        parser = QueryParser("content", index.schema, group=OrGroup)
        for r in range(req["rounds"] + 1):
            for q in sample["queries"]:
                t = time.perf_counter()
                hits = searcher.search(parser.parse(q), limit=5)
                [h["doc_id"] for h in hits]
                if r > 0:
                    times.append(time.perf_counter() - t)
json.dump(times, sys.stdout)
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(5);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = root.join("../shared/data/locomo/locomo10-dev.json");
    let samples: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&data)?)?;
    let dir = tempfile::tempdir()?;
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default())?;
    let mut input = Vec::new();
    let mut asked = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        let docs = turns(sample);
        let queries: Vec<String> = sample["qa"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|q| q["question"].as_str().map(String::from))
            .collect();
        let ns = format!("locomo-{i}");
        engine.create_namespace(&ns, NamespaceOptions::default())?;
        engine.put_many(&ns, docs.iter().map(|t| NewRecord::new(t.as_str())))?;
        input.push(json!({"docs": docs, "queries": queries}));
        asked.push((ns, queries));
    }
    let timed = |syntax: QuerySyntax| -> Result<Vec<Duration>, mb_engine::Error> {
        let mut times = Vec::new();
        for round in 0..=rounds {
            for (ns, queries) in &asked {
                for q in queries {
                    let start = Instant::now();
                    let hits = engine.search_query(ns, q, syntax, 5)?;
                    std::hint::black_box(hits);
                    if round > 0 {
                        times.push(start.elapsed());
                    }
                }
            }
        }
        Ok(times)
    };
    let mut whoosh_syntax = timed(QuerySyntax::Whoosh)?;
    let mut plain = timed(QuerySyntax::Plain)?;

    let python = root.join(".cache/venv/bin/python");
    let mut child = Command::new(&python)
        .args(["-c", WHOOSH])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let request = json!({"samples": input, "rounds": rounds});
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(serde_json::to_string(&request)?.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        return Err(format!("{} could not run Whoosh", python.display()).into());
    }
    let seconds: Vec<f64> = serde_json::from_slice(&output.stdout)?;
    let mut whoosh: Vec<Duration> = seconds.into_iter().map(Duration::from_secs_f64).collect();

    let questions: usize = asked.iter().map(|(_, q)| q.len()).sum();
    println!("{questions} LoCoMo dev questions over 8 conversations, {rounds} timed rounds, top 5");
    println!("| path | p50 | p99 | mean |");
    println!("|---|---|---|---|");
    let whoosh_mean = mean_ms(&whoosh);
    let whoosh_p50 = percentiles(&mut whoosh).0;
    for (name, times) in [
        ("engine, Whoosh syntax", &mut whoosh_syntax),
        ("engine, plain text", &mut plain),
        ("Whoosh 2.7.4 (Python)", &mut whoosh),
    ] {
        let mean = mean_ms(times);
        let (p50, p99) = percentiles(times);
        println!("| {name} | {p50:.3} ms | {p99:.3} ms | {mean:.3} ms |");
    }
    let (ours_p50, _) = percentiles(&mut whoosh_syntax);
    let ours_mean = mean_ms(&whoosh_syntax);
    println!(
        "Whoosh syntax: {:.1}x Whoosh by p50, {:.1}x by mean",
        whoosh_p50 / ours_p50,
        whoosh_mean / ours_mean
    );
    Ok(())
}

/// Upstream BM25-M's documents: every turn as `Speaker <name> says: <text>`, in order.
fn turns(sample: &Value) -> Vec<String> {
    let conv = &sample["conversation"];
    let mut out = Vec::new();
    for session in 1.. {
        let Some(turns) = conv
            .get(format!("session_{session}"))
            .and_then(Value::as_array)
        else {
            break;
        };
        for t in turns {
            let (Some(speaker), Some(text)) = (t["speaker"].as_str(), t["text"].as_str()) else {
                continue;
            };
            out.push(format!("Speaker {speaker} says: {text}"));
        }
    }
    out
}
