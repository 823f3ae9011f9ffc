//! Times `delete_where` removing whole sessions: records written together, so their ids are
//! consecutive (what a memory service forgets when a user drops a conversation), unlike the
//! stores benchmark's filtered delete, whose records are scattered. Usage:
//! `session_delete_probe DIR [RECORDS] [SESSION]` writes RECORDS records (default 100 000, at
//! most ten million) in sessions of SESSION (default 1 000, at most an eighth of them) into a
//! new store at DIR, each with a `session` attribute, a `speaker` of two, a short text and a
//! 384-dimensional vector, then deletes eight sessions one by one, durably, and prints each
//! time.

use std::time::{Duration, Instant};

use mb_engine::{Batch, Engine, EngineOptions, Filter, NamespaceOptions, NewRecord, Space};

const DIM: usize = 384;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        return Err("usage: session_delete_probe DIR [RECORDS] [SESSION]".into());
    };
    // Bounded: a store of ten million records takes minutes and gigabytes here.
    let records: usize = args.get(2).map_or(Ok(100_000), |n| n.parse())?;
    let records = records.clamp(8, 10_000_000);
    let session: usize = args.get(3).map_or(Ok(1_000), |n| n.parse())?;
    let session = session.clamp(1, records / 8);
    // No HNSW build in the background: it would share the cores with what is timed.
    let mut options = EngineOptions::default();
    options.hnsw.threshold = usize::MAX;
    options.sync_writes = true;
    let engine = Engine::open(path, options)?;
    engine.create_space(Space::new("v", DIM))?;
    engine.create_namespace("bench", NamespaceOptions::default())?;
    for start in (0..records).step_by(5_000) {
        let mut batch = Batch::new();
        for i in start..(start + 5_000).min(records) {
            let text = format!(
                "turn {} of session {}: notes on topic {}",
                i % session,
                i / session,
                i % 97
            );
            batch.put(
                NewRecord::new(text)
                    .with_attribute("session", (i / session).to_string())
                    .with_attribute("speaker", ["user", "assistant"][i % 2])
                    .with_vector("v", vector(i)),
            );
        }
        engine.write("bench", batch)?;
    }
    // The search state is loaded, as in a service that has been answering.
    engine.search_text("bench", "notes on topic", 1)?;
    engine.search_vector("bench", "v", &vector(records + 1), 1)?;
    let sessions = records / session;
    let mut total = Duration::ZERO;
    for s in (0..8).map(|k| k * sessions / 8) {
        let filter = Filter::new().attribute("session", s.to_string());
        let started = Instant::now();
        let deleted = engine.delete_where("bench", &filter)?;
        let took = started.elapsed();
        total += took;
        println!("delete_where session={s}: {took:?} ({deleted} deleted)");
    }
    println!("in all: {total:?}");
    engine.close()?;
    Ok(())
}

/// A deterministic unit vector for record `i`.
fn vector(i: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..DIM)
        .map(|j| ((i * 7919 + j * 104_729) as f32 * 0.001).sin())
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}
