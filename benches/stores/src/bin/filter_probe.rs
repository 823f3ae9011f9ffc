//! Times filtered vector searches (top 10 among the records whose attribute KEY is VALUE) on an
//! engine directory: the median and slowest of 50 queries, after a warm-up search and a
//! flush (so the graph and the vectors are loaded). Read-only.
//!
//! Usage: `cargo run --release -p mb-stores-bench --bin filter_probe -- DIR KEY VALUE
//! [NAMESPACE SPACE]` (defaults: the stores benchmark's `bench` and `minilm`).

use std::time::{Duration, Instant};

use mb_engine::{Engine, EngineOptions, Filter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(key), Some(value)) = (args.get(1), args.get(2), args.get(3)) else {
        return Err("usage: filter_probe DIR KEY VALUE [NAMESPACE SPACE]".into());
    };
    let namespace = args.get(4).map_or("bench", String::as_str);
    let space = args.get(5).map_or("minilm", String::as_str);
    let engine = Engine::open(path, EngineOptions::default())?;
    let dim = engine
        .space(space)
        .ok_or_else(|| format!("no space {space} in {path}"))?
        .dim;
    let query = |q: usize| -> Vec<f32> { (0..dim).map(|d| ((q * 31 + d) as f32).sin()).collect() };
    engine.search_vector(namespace, space, &query(0), 10)?;
    engine.flush()?;
    let filter = Filter::new().attribute(key.as_str(), value.as_str());
    let matching = engine.records_where(namespace, &filter)?.len();
    let mut times: Vec<Duration> = Vec::with_capacity(50);
    for q in 1..=50 {
        let started = Instant::now();
        let hits = engine.search_vector_filtered(namespace, space, &query(q), 10, &filter)?;
        times.push(started.elapsed());
        if hits.iter().any(|h| !filter.matches(&h.record)) {
            return Err("a hit does not match the filter".into());
        }
    }
    times.sort();
    println!(
        "{matching} records match; filtered top 10: p50 {:?}, slowest {:?}",
        times[times.len() / 2],
        times[times.len() - 1]
    );
    engine.close()?;
    Ok(())
}
