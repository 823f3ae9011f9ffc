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

use mb_engine::EngineOptions;
use mb_stores_bench::{median, reopen_round, Data};
use serde_json::json;

const NS: &str = "bench";
const SPACE: &str = "minilm";
/// Rounds unless given, and the most that may be asked for.
const ROUNDS: usize = 20;
const MAX_ROUNDS: usize = 10_000;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The stores benchmark's options: every write synced before it returns.
fn options() -> EngineOptions {
    let mut options = EngineOptions::default();
    options.sync_writes = true;
    options
}

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
    let mut all = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        all.push(reopen_round(&data, store, options(), NS, SPACE)?);
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
