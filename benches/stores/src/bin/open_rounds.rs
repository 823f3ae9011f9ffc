//! How long a closed engine takes to open and answer its first questions: the numbers the
//! stores benchmark's reopen phase gives, over more rounds, for comparing builds.
//!
//! Usage: `open_rounds DATA_DIR STORE_DIR [ROUNDS]` (the data set `prepare.py` wrote, a closed
//! engine directory such as the one `stores_engine DATA_DIR 100000 STORE_DIR` leaves, 20
//! rounds unless given). Each round opens the engine, searches by vector, then by text (the
//! benchmark's first query both ways), and closes it; the medians of the open, of the open to
//! the first vector answer and to the first text answer after it are printed as one JSON
//! object, with every round. The first round's close writes what the store's last session
//! left unwritten (a vector file, say), so later rounds all start from the same directory.

use std::path::Path;
use std::time::Instant;

use mb_engine::{Engine, EngineOptions};
use mb_stores_bench::{median, Data};
use serde_json::json;

const NS: &str = "bench";
const SPACE: &str = "minilm";
/// Rounds unless given, and the most that may be asked for.
const ROUNDS: usize = 20;
const MAX_ROUNDS: usize = 10_000;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(data_dir), Some(store)) = (args.get(1), args.get(2)) else {
        return Err("usage: open_rounds DATA_DIR STORE_DIR [ROUNDS]".into());
    };
    let rounds = match args.get(3) {
        Some(n) => n.parse::<usize>()?.clamp(1, MAX_ROUNDS),
        None => ROUNDS,
    };
    let store = Path::new(store);
    if !store.exists() {
        return Err(format!("{}: no such engine directory", store.display()).into());
    }
    // Only the queries are read: the smallest data set that holds them.
    let data = Data::load(Path::new(data_dir), 1)?;
    if data.queries.is_empty() {
        return Err(format!("{data_dir}: the data set has no queries").into());
    }
    let mut all = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        all.push(round(&data, store)?);
    }
    let column = |i: usize| median(all.iter().map(|r: &[f64; 3]| r[i]).collect());
    let out = json!({
        "rounds": rounds,
        "open_ms": column(0),
        "first_vector_answer_ms": column(1),
        "first_text_answer_ms": column(2),
        "every_round": all,
    });
    println!("{out}");
    Ok(())
}

/// One round: the milliseconds from the open's start to its end, to the first vector answer,
/// and to the first text answer after it.
fn round(data: &Data, store: &Path) -> Result<[f64; 3]> {
    let start = Instant::now();
    let engine = Engine::open(store, EngineOptions::default())?;
    let opened = start.elapsed();
    engine.search_vector(NS, SPACE, data.query_vector(0), 10)?;
    let vector = start.elapsed();
    engine.search_text(NS, &data.queries[0].text, 10)?;
    let text = start.elapsed();
    engine.close()?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    Ok([ms(opened), ms(vector), ms(text)])
}
