//! Times filtered deletes right after a bulk load, in the state the stores benchmark deletes
//! in (its memtables full of the load, its search state loaded), once per LoCoMo source of the
//! data set: eight samples of the operation `stores_engine` times three times. It skips
//! `stores_engine`'s search phases, and its 100 single deletes remove 100 of its 200 single
//! inserts, where `stores_engine`'s remove the first 100 records of the bulk load.
//!
//! Usage: `delete_after_load DATA_DIR N STORE_DIR` (`STORE_DIR` must not exist).

use std::path::Path;
use std::time::Instant;

use mb_engine::{Engine, EngineOptions, Filter, NamespaceOptions, Space};
use mb_stores_bench::{engine_record, Data, DIM};

const NS: &str = "bench";
const SPACE: &str = "minilm";
/// Records written one at a time after the bulk load, as `stores_engine` writes them.
const SINGLES: usize = 200;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(data_dir), Some(n), Some(store)) = (args.get(1), args.get(2), args.get(3)) else {
        return Err("usage: delete_after_load DATA_DIR N STORE_DIR".into());
    };
    let n: usize = n.parse()?;
    let data = Data::load(Path::new(data_dir), n)?;
    let mut options = EngineOptions::default();
    options.sync_writes = true;
    let engine = Engine::open(store, options)?;
    engine.create_namespace(NS, NamespaceOptions::default())?;
    engine.create_space(Space::new(SPACE, DIM))?;
    let bulk = n.saturating_sub(SINGLES);
    for chunk in (0..bulk).collect::<Vec<_>>().chunks(1000) {
        engine.put_many(NS, chunk.iter().map(|&i| engine_record(&data, i, SPACE)))?;
    }
    engine.search_vector(NS, SPACE, data.query_vector(0), 10)?;
    engine.search_text(NS, &data.queries[0].text, 10)?;
    engine.merge_lexical_segments()?;
    let mut first = Vec::new();
    for i in bulk..n {
        first.push(engine.put(NS, engine_record(&data, i, SPACE))?);
    }
    engine.flush()?;
    for id in first.iter().take(100) {
        engine.delete(NS, *id)?;
    }
    let mut sources: Vec<&str> = data.rows.iter().map(|r| r.source.as_str()).collect();
    sources.sort_unstable();
    sources.dedup();
    for source in sources.into_iter().filter(|s| s.starts_with("locomo")) {
        let started = Instant::now();
        let deleted = engine.delete_where(NS, &Filter::new().attribute("source", source))?;
        println!("{source}: {deleted} records in {:?}", started.elapsed());
    }
    engine.close()?;
    Ok(())
}
