//! Reopen time of a large store: how long a closed engine takes to open and answer its first
//! vector and text search, and how fast its next vector searches are, with and without the
//! vector files written at close (`EngineOptions::vector_snapshots`, which keep the HNSW graph
//! too), and what those files cost on disk.
//!
//! Usage: `reopen_scale DATA_DIR N STORE_DIR [EF_CONSTRUCTION]`: the data set `prepare.py`
//! wrote or, for more records than it holds, the stand-in `stand_in.py` makes from it (a
//! million real records would take hours to embed here); the HNSW build's candidate list, the
//! engine's default unless given. `STORE_DIR` is built once and reused by later runs. Prints
//! one JSON object.

use std::path::{Path, PathBuf};
use std::time::Instant;

use mb_engine::{Batch, Engine, EngineOptions, NamespaceOptions, Space};
use mb_stores_bench::{dir_bytes, engine_record, Data, DIM};
use serde_json::{json, Map, Value};

const NS: &str = "bench";
const SPACE: &str = "minilm";
/// Records per write while building.
const CHUNK: usize = 5_000;
/// Reopens timed per setting.
const ROUNDS: usize = 3;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(data_dir), Some(n), Some(store)) = (args.get(1), args.get(2), args.get(3)) else {
        return Err("usage: reopen_scale DATA_DIR N STORE_DIR [EF_CONSTRUCTION]".into());
    };
    let n: usize = n.parse()?;
    let mut options = EngineOptions::default();
    if let Some(ef) = args.get(4) {
        options.hnsw.ef_construction = ef.parse::<usize>()?.clamp(1, 4096);
    }
    let store = PathBuf::from(store);
    // The records are read only to build the store; its reopens need the queries alone (a
    // million records' vectors are 1.5 GB to read again on every later run).
    let records = if store.exists() { 0 } else { n };
    let data = Data::load(Path::new(data_dir), records)?;
    let mut out = Map::new();
    out.insert("n".into(), json!(n));
    if !store.exists() {
        let started = Instant::now();
        build(&data, n, &store)?;
        out.insert("build_s".into(), json!(started.elapsed().as_secs_f64()));
    }
    // The first session searches (loading the vectors from the store), waits for the HNSW
    // graph that search started, and closes: that close writes the vector file.
    let started = Instant::now();
    let (first, close_ms) = reopen(&store, &data, &options, true, true)?;
    out.insert("first_open_from_store".into(), first);
    out.insert("close_writing_file_ms".into(), json!(close_ms));
    out.insert("disk_with_file_mib".into(), json!(mib(dir_bytes(&store))));
    out.insert(
        "vector_file_mib".into(),
        json!(mib(dir_bytes(&store.join("vectors")))),
    );
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        rounds.push(reopen(&store, &data, &options, true, false)?.0);
    }
    out.insert("with_file".into(), json!(rounds));
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        rounds.push(reopen(&store, &data, &options, false, false)?.0);
    }
    out.insert("without_file".into(), json!(rounds));
    out.insert(
        "disk_without_file_mib".into(),
        json!(mib(dir_bytes(&store))),
    );
    out.insert("measured_s".into(), json!(started.elapsed().as_secs_f64()));
    println!("{}", Value::Object(out));
    Ok(())
}

/// Writes the `n` records of `data` (no HNSW graph is built while writing: the reopen is
/// what is measured).
fn build(data: &Data, n: usize, store: &Path) -> Result<()> {
    let mut options = EngineOptions::default();
    options.hnsw.threshold = usize::MAX;
    let engine = Engine::open(store, options)?;
    engine.create_space(Space::new(SPACE, DIM))?;
    engine.create_namespace(NS, NamespaceOptions::default())?;
    for start in (0..n).step_by(CHUNK) {
        let mut batch = Batch::new();
        for i in start..(start + CHUNK).min(n) {
            batch.put(engine_record(data, i, SPACE));
        }
        engine.write(NS, batch)?;
    }
    engine.close()?;
    Ok(())
}

/// Vector searches timed after the first answers.
const NEXT_QUERIES: usize = 20;

/// Opens the store, searches once by vector and once by text, then [`NEXT_QUERIES`] more times
/// by vector (graph-fast only if the graph came back with the file, its points then scored from
/// the store), optionally waits for the HNSW graph, and closes; the timings and the close's
/// duration. With the vector file, it also waits for the background load of the graph's
/// points' vectors and times [`NEXT_QUERIES`] vector searches after it.
fn reopen(
    store: &Path,
    data: &Data,
    options: &EngineOptions,
    vector_snapshots: bool,
    wait_for_graph: bool,
) -> Result<(Value, f64)> {
    let mut options = options.clone();
    options.vector_snapshots = vector_snapshots;
    let started = Instant::now();
    let engine = Engine::open(store, options)?;
    let opened = started.elapsed();
    engine.search_vector(NS, SPACE, data.query_vector(0), 10)?;
    let vector = started.elapsed();
    engine.search_text(NS, &data.queries[0].text, 10)?;
    let both = started.elapsed();
    let next = vector_p50(&engine, data)?;
    let mut timings = json!({
        "open_ms": ms(opened),
        "first_vector_answer_ms": ms(vector),
        "first_both_answers_ms": ms(both),
        "next_vector_answers_p50_ms": next,
    });
    if vector_snapshots && !wait_for_graph {
        engine.flush()?;
        timings["loaded_after_ms"] = json!(ms(started.elapsed()));
        timings["loaded_vector_answers_p50_ms"] = json!(vector_p50(&engine, data)?);
    }
    if wait_for_graph {
        let waiting = Instant::now();
        engine.flush()?;
        timings["graph_wait_s"] = json!(waiting.elapsed().as_secs_f64());
    }
    let closing = Instant::now();
    engine.close()?;
    Ok((timings, ms(closing.elapsed())))
}

/// The median time of [`NEXT_QUERIES`] vector searches.
fn vector_p50(engine: &Engine, data: &Data) -> Result<f64> {
    let mut times = Vec::with_capacity(NEXT_QUERIES);
    for q in 1..=NEXT_QUERIES {
        let asked = Instant::now();
        engine.search_vector(NS, SPACE, data.query_vector(q % data.queries.len()), 10)?;
        times.push(ms(asked.elapsed()));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}
