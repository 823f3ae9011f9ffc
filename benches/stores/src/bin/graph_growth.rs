//! How a namespace's HNSW graph keeps up with records added after it was built: the first
//! `BASE` records are written and their graph built, then the rest arrive in batches of 1 000
//! (each batch followed by a search, as an application's reads follow its writes), which grow
//! the graph whenever the fresh records pass its grow fraction. Prints, as one JSON object, the
//! build time, the time until every growth is done, recall@10 at the default beam over all
//! records against exact search, and the process's peak RSS.
//!
//! Usage: `graph_growth DATA_DIR BASE N STORE_DIR` (the data set `prepare.py` wrote;
//! `STORE_DIR` must not exist).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mb_engine::{Engine, EngineOptions, NamespaceOptions, NewRecord, RecordId, Space};
use mb_stores_bench::{peak_rss_mib, Data, DIM};
use serde_json::json;

const NS: &str = "bench";
const SPACE: &str = "minilm";
/// Queries whose recall is measured.
const QUERIES: usize = 200;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(data_dir), Some(base), Some(n), Some(store)) =
        (args.get(1), args.get(2), args.get(3), args.get(4))
    else {
        return Err("usage: graph_growth DATA_DIR BASE N STORE_DIR".into());
    };
    let (base, n): (usize, usize) = (base.parse()?, n.parse()?);
    if base > n {
        return Err(format!("BASE {base} is more than N {n}").into());
    }
    let data = Data::load(Path::new(data_dir), n)?;
    let engine = Engine::open(PathBuf::from(store), EngineOptions::default())?;
    engine.create_namespace(NS, NamespaceOptions::default())?;
    engine.create_space(Space::new(SPACE, DIM))?;
    let record = |i: usize| {
        NewRecord::new(data.rows[i].text.as_str()).with_vector(SPACE, data.vector(i).to_vec())
    };

    let mut row_of: HashMap<RecordId, u64> = HashMap::with_capacity(n);
    let mut put = |rows: &[usize]| -> Result<()> {
        let ids = engine.put_many(NS, rows.iter().map(|&i| record(i)))?;
        row_of.extend(ids.into_iter().zip(rows.iter().map(|&i| i as u64)));
        Ok(())
    };
    let start = Instant::now();
    for chunk in (0..base).collect::<Vec<_>>().chunks(1000) {
        put(chunk)?;
    }
    engine.search_vector(NS, SPACE, data.query_vector(0), 10)?;
    engine.flush()?;
    let built = start.elapsed();

    let start = Instant::now();
    for (batch, chunk) in (base..n).collect::<Vec<_>>().chunks(1000).enumerate() {
        put(chunk)?;
        engine.search_vector(NS, SPACE, data.query_vector(batch % data.queries.len()), 10)?;
    }
    engine.flush()?;
    let grown = start.elapsed();

    let queries = QUERIES.min(data.queries.len());
    let mut found = 0;
    for q in 0..queries {
        let truth = data.exact_top(q, 10, n);
        let hits = engine.search_vector(NS, SPACE, data.query_vector(q), 10)?;
        found += hits
            .iter()
            .filter(|hit| {
                row_of
                    .get(&hit.record.id)
                    .is_some_and(|row| truth.contains(row))
            })
            .count();
    }
    engine.close()?;
    println!(
        "{}",
        json!({
            "base": base,
            "n": n,
            "build_s": built.as_secs_f64(),
            "growth_s": grown.as_secs_f64(),
            "recall_at_10": found as f64 / (queries * 10) as f64,
            "peak_rss_mib": peak_rss_mib(),
        })
    );
    Ok(())
}
