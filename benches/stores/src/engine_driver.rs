//! What the engine's drivers of the stores benchmark share beyond the data set: a record as they
//! store it, and one reopen round.

use std::path::Path;
use std::time::{Duration, Instant};

use mb_engine::{Engine, EngineOptions, NewRecord};

use mb_stores_data::Data;

/// Record `i` as the engine's drivers store it: its text, its `source` and `speaker`
/// attributes, and its vector in `space`.
pub fn engine_record(data: &Data, i: usize, space: &str) -> NewRecord {
    let row = &data.rows[i];
    NewRecord::new(row.text.as_str())
        .with_attribute("source", row.source.as_str())
        .with_attribute("speaker", row.speaker.as_str())
        .with_vector(space, data.vector(i).to_vec())
}

/// One reopen round of the closed engine directory `store`, opened with `options`: the
/// milliseconds from the open's start to its end, to the first vector answer in `space` and to
/// the first text answer after it (the data set's first query both ways, in namespace `ns`);
/// the engine is closed after. The stores benchmark's reopen phase and `open_rounds` time it.
pub fn reopen_round(
    data: &Data,
    store: &Path,
    options: EngineOptions,
    ns: &str,
    space: &str,
) -> Result<[f64; 3], Box<dyn std::error::Error>> {
    let query = data.queries.first().ok_or("the data set has no queries")?;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let start = Instant::now();
    let engine = Engine::open(store, options)?;
    let opened = start.elapsed();
    engine.search_vector(ns, space, data.query_vector(0), 10)?;
    let first_vector = start.elapsed();
    engine.search_text(ns, &query.text, 10)?;
    let first_text = start.elapsed();
    engine.close()?;
    Ok([ms(opened), ms(first_vector), ms(first_text)])
}
