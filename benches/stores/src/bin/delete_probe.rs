//! Times `delete_where` on a copy of an engine directory, once per value, as the stores
//! benchmark runs it (durable, after 100 single deletes). Usage: `delete_probe DIR KEY
//! VALUE...` (the store is changed: give it a copy).

use std::time::Instant;

use mb_engine::{Engine, EngineOptions, Filter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(key), values) = (args.get(1), args.get(2), args.get(3..)) else {
        return Err("usage: delete_probe DIR KEY VALUE...".into());
    };
    // No HNSW build in the background: it would share the cores with what is timed.
    let mut options = EngineOptions::default();
    options.hnsw.threshold = usize::MAX;
    // Durable, as the stores benchmark runs it.
    options.sync_writes = true;
    let engine = Engine::open(path, options)?;
    engine.search_text("bench", "warm up", 1)?;
    // As in the stores benchmark, the lexical writer exists (a flush commits through it) and
    // 100 single deletes come first.
    engine.flush()?;
    let first: Vec<_> = engine
        .records("bench")?
        .take(100)
        .collect::<Result<_, _>>()?;
    for record in &first {
        engine.delete("bench", record.id)?;
    }
    let mut total = std::time::Duration::ZERO;
    for value in values.unwrap_or_default() {
        let filter = Filter::new().attribute(key.as_str(), value.as_str());
        let started = Instant::now();
        let deleted = engine.delete_where("bench", &filter)?;
        let took = started.elapsed();
        total += took;
        println!("delete_where {key}={value}: {took:?} ({deleted} deleted)");
    }
    println!("in all: {total:?}");
    engine.close()?;
    Ok(())
}
