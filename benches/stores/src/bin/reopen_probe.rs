//! Times three reopens of an existing engine directory: open, the first vector search and the
//! first text search (which load the namespace's derived state), and close. Small enough to
//! run under `perf record -g`, which is how the reopen profile in `docs/history.md` was taken.
//!
//! Usage: `cargo run --release -p mb-stores-bench --bin reopen_probe -- DIR [NAMESPACE SPACE]`
//! (defaults: the stores benchmark's `bench` and `minilm`). With `MB_PROBE_WAIT_FOR_GRAPH=1`
//! the first round waits for the HNSW graph its search started before closing, so the vector
//! file written at that close keeps the graph and the later rounds read it back;
//! `MB_PROBE_EF_CONSTRUCTION=N` builds that graph with a candidate list of N instead of the
//! default (a million vectors take about 4 minutes at 32 here, several times that at the
//! default). The reopens themselves do not depend on it.

use std::time::Instant;

use mb_engine::{Engine, EngineOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        return Err("usage: reopen_probe DIR [NAMESPACE SPACE]".into());
    };
    let namespace = args.get(2).map_or("bench", String::as_str);
    let space = args.get(3).map_or("minilm", String::as_str);
    let mut options = EngineOptions::default();
    if let Some(ef) = std::env::var_os("MB_PROBE_EF_CONSTRUCTION") {
        let ef = ef.to_str().and_then(|ef| ef.parse::<usize>().ok());
        options.hnsw.ef_construction = ef
            .ok_or("MB_PROBE_EF_CONSTRUCTION is not a number")?
            .clamp(1, 4096);
    }
    for round in 0..3 {
        let started = Instant::now();
        let engine = Engine::open(path, options.clone())?;
        let opened = started.elapsed();
        let dim = engine
            .space(space)
            .ok_or_else(|| format!("no space {space} in {path}"))?
            .dim;
        let query = vec![(dim as f32).sqrt().recip(); dim];
        let searching = Instant::now();
        engine.search_vector(namespace, space, &query, 10)?;
        let vector = searching.elapsed();
        let searching = Instant::now();
        engine.search_text(namespace, "what did she say about the trip", 10)?;
        let text = searching.elapsed();
        if round == 0 && std::env::var_os("MB_PROBE_WAIT_FOR_GRAPH").is_some() {
            let waiting = Instant::now();
            engine.flush()?;
            println!("waited {:?} for the graph", waiting.elapsed());
        }
        let closing = Instant::now();
        engine.close()?;
        println!(
            "open {opened:?}, first vector search {vector:?}, first text search {text:?}, close {:?}",
            closing.elapsed()
        );
    }
    Ok(())
}
