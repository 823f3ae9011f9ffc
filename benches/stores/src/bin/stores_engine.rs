//! The engine's side of the stores benchmark, driven from Rust: the same phases, data and
//! queries as `benches/stores/worker.py` runs for every Python store, printed as one JSON object.
//!
//! Usage: `stores_engine DATA_DIR N STORE_DIR` (the data set `prepare.py` wrote; `STORE_DIR` must
//! not exist). Durable mode: `EngineOptions::sync_writes = true` (every write's batch is synced
//! to the write-ahead log before it returns).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mb_engine::{Engine, EngineOptions, Filter, HybridQuery, NamespaceOptions, RecordId, Space};
use mb_stores_bench::{
    dir_bytes, engine_record, median, peak_rss_mib, percentiles, record_bulk, reopen_round, Data,
    DIM,
};
use serde_json::{json, Map, Value};

const NS: &str = "bench";
const SPACE: &str = "minilm";
/// Records written one at a time (durably) after the bulk load.
const SINGLES: usize = 200;
/// Queries timed per search phase.
const QUERIES: usize = 200;
/// HNSW beam widths of the latency/recall curve. The two widest reach, at a million stand-in
/// records, the recall the peers' widest settings reach there (docs/stores.md). `adapters.py`
/// sweeps the same widths through the Python package.
const EF_SWEEP: [usize; 7] = [32, 64, 96, 160, 256, 400, 640];
/// The sources whose records the delete-by-filter phase removes, one delete each, as
/// `worker.py` deletes them (the first is the one earlier runs deleted alone).
const DELETE_SOURCES: [&str; 3] = ["locomo3", "locomo2", "locomo4"];
/// Rounds of the reopen phase.
const REOPENS: usize = 5;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(data_dir), Some(n), Some(store)) = (args.get(1), args.get(2), args.get(3)) else {
        return Err("usage: stores_engine DATA_DIR N STORE_DIR".into());
    };
    let n: usize = n.parse()?;
    let data = Data::load(Path::new(data_dir), n)?;
    // The exact top 10 of every query over all n records (the truth for recall), before the
    // data's RSS is taken, as `worker.py` does.
    let queries = QUERIES.min(data.queries.len());
    let truth: Vec<Vec<u64>> = (0..queries).map(|q| data.exact_top(q, 10, n)).collect();
    let base_rss = peak_rss_mib().unwrap_or(f64::NAN);
    let store = PathBuf::from(store);
    let mut out = Map::new();
    out.insert("store".into(), json!("memorybench (Rust)"));
    out.insert("n".into(), json!(n));
    out.insert("rss_after_data_mib".into(), json!(base_rss));
    let ids = run(&data, &truth, &store, &mut out)?;
    drop(ids);
    out.insert("peak_rss_mib".into(), json!(peak_rss_mib()));
    println!("{}", Value::Object(out));
    Ok(())
}

fn options() -> EngineOptions {
    let mut options = EngineOptions::default();
    options.sync_writes = true;
    options
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn run(
    data: &Data,
    truth: &[Vec<u64>],
    store: &Path,
    out: &mut Map<String, Value>,
) -> Result<HashMap<RecordId, u64>> {
    let n = data.rows.len();
    let bulk = n - SINGLES;
    let engine = Engine::open(store, options())?;
    engine.create_namespace(NS, NamespaceOptions::default())?;
    engine.create_space(Space::new(SPACE, DIM))?;
    let mut row_of: HashMap<RecordId, u64> = HashMap::with_capacity(n);

    // Bulk insert: batches of 1 000, then until every index is ready (flush waits for the
    // HNSW graph that the first search starts building).
    let start = Instant::now();
    for chunk in (0..bulk).collect::<Vec<_>>().chunks(1000) {
        let ids = engine.put_many(NS, chunk.iter().map(|&i| engine_record(data, i, SPACE)))?;
        row_of.extend(ids.into_iter().zip(chunk.iter().map(|&i| i as u64)));
    }
    let written = start.elapsed();
    engine.search_vector(NS, SPACE, data.query_vector(0), 10)?;
    engine.search_text(NS, &data.queries[0].text, 10)?;
    engine.merge_lexical_segments()?;
    let indexed = start.elapsed();
    record_bulk(out, bulk, written, indexed);

    // Single durable inserts.
    let mut times = Vec::with_capacity(SINGLES);
    for i in bulk..n {
        let start = Instant::now();
        let id = engine.put(NS, engine_record(data, i, SPACE))?;
        times.push(start.elapsed());
        row_of.insert(id, i as u64);
    }
    let (p50, p99) = percentiles(&mut times);
    out.insert("insert_p50_ms".into(), json!(p50));
    out.insert("insert_p99_ms".into(), json!(p99));
    engine.flush()?;

    // Vector search over the ef sweep, recall against exact search over the same records.
    let queries = truth.len();
    let mut curve = Vec::new();
    for ef in EF_SWEEP {
        engine.set_ef_search(ef);
        let (mut times, mut found) = (Vec::with_capacity(queries), 0usize);
        for (q, truth) in truth.iter().enumerate() {
            let start = Instant::now();
            let hits = engine.search_vector(NS, SPACE, data.query_vector(q), 10)?;
            times.push(start.elapsed());
            found += hits
                .iter()
                .filter(|h| row_of.get(&h.record.id).is_some_and(|r| truth.contains(r)))
                .count();
        }
        let (p50, p99) = percentiles(&mut times);
        let recall = found as f64 / (queries * 10) as f64;
        curve.push(
            json!({"setting": format!("ef {ef}"), "p50_ms": p50, "p99_ms": p99, "recall": recall}),
        );
    }
    engine.set_ef_search(96);
    out.insert("vector_curve".into(), json!(curve));

    // Full-text (BM25, plain text queries) and hybrid (RRF of BM25 and vectors).
    let timed = |f: &dyn Fn(usize) -> mb_engine::Result<usize>| -> Result<(f64, f64)> {
        let mut times = Vec::with_capacity(queries);
        for q in 0..queries {
            let start = Instant::now();
            std::hint::black_box(f(q)?);
            times.push(start.elapsed());
        }
        Ok(percentiles(&mut times))
    };
    let (p50, p99) = timed(&|q| Ok(engine.search_text(NS, &data.queries[q].text, 10)?.len()))?;
    out.insert("text_p50_ms".into(), json!(p50));
    out.insert("text_p99_ms".into(), json!(p99));
    let (p50, p99) = timed(&|q| {
        let query = HybridQuery::new(
            data.queries[q].text.as_str(),
            SPACE,
            data.query_vector(q).to_vec(),
            10,
        );
        Ok(engine.search_hybrid(NS, &query)?.len())
    })?;
    out.insert("hybrid_p50_ms".into(), json!(p50));
    out.insert("hybrid_p99_ms".into(), json!(p99));

    // Deletes: 100 single ids (each durable), then every record of one source.
    let by_row: HashMap<u64, RecordId> = row_of.iter().map(|(id, row)| (*row, *id)).collect();
    let victims: Vec<RecordId> = (0..100u64)
        .filter_map(|row| by_row.get(&row).copied())
        .collect();
    let mut times = Vec::with_capacity(victims.len());
    for id in &victims {
        let start = Instant::now();
        engine.delete(NS, *id)?;
        times.push(start.elapsed());
    }
    let (p50, p99) = percentiles(&mut times);
    out.insert("delete_id_p50_ms".into(), json!(p50));
    out.insert("delete_id_p99_ms".into(), json!(p99));
    let mut runs = Vec::new();
    for source in DELETE_SOURCES {
        let start = Instant::now();
        let deleted = engine.delete_where(NS, &Filter::new().attribute("source", source))?;
        runs.push((ms(start.elapsed()), deleted));
    }
    out.insert("delete_filter_ms".into(), json!(runs[0].0));
    out.insert("delete_filter_count".into(), json!(runs[0].1));
    out.insert("delete_filter_runs".into(), json!(runs));
    let times: Vec<f64> = runs.iter().map(|(ms, _)| *ms).collect();
    out.insert("delete_filter_median_ms".into(), json!(median(times)));
    engine.close()?;

    // Reopen rounds: open, then the first vector search and the first text search (which
    // load the derived state), each timed from the open, then close.
    out.insert(
        "disk_mib".into(),
        json!(dir_bytes(store) as f64 / 1048576.0),
    );
    let mut rounds = Vec::with_capacity(REOPENS);
    for _ in 0..REOPENS {
        rounds.push(reopen_round(data, store, options(), NS, SPACE)?);
    }
    out.insert("reopen_rounds".into(), json!(rounds));
    for (i, key) in ["reopen", "reopen_first_query", "reopen_first_text"]
        .iter()
        .enumerate()
    {
        out.insert(format!("{key}_ms"), json!(rounds[0][i]));
        let times = rounds.iter().map(|round| round[i]).collect();
        out.insert(format!("{key}_median_ms"), json!(median(times)));
    }
    Ok(row_of)
}
