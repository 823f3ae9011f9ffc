//! memvid-core 2.0.140 (`lex` + `vec`) in the stores benchmark: the phases of `stores_engine`
//! and `worker.py` on the same data, printed as one JSON object.
//!
//! Usage: `stores-memvid DATA_DIR N STORE_DIR` (the data set `prepare.py` wrote; `STORE_DIR`
//! must not exist). Built and run by `benches/stores/run.py` (store key `memvid`), or alone with
//! `cargo run --release --manifest-path benches/stores/memvid/Cargo.toml -- DATA N DIR`.
//!
//! Used as its README shows: one `.mv2` file, `PutOptions::builder()` with its defaults, a tag
//! per attribute, the caller's own embeddings (`put_with_embedding_and_options`), `commit` to
//! make writes searchable. Its documented modes:
//! - bulk load in batch mode (`begin_batch` with `PutManyOpts::default()`, which syncs once at
//!   `end_batch`), then `commit`, which builds the indexes (HNSW from 1 000 vectors);
//! - single inserts outside batch mode: each `put` appends to the file's write-ahead log and
//!   syncs it before it returns (durable); `commit` after the 200 makes them searchable;
//! - vector search at its fixed beam (`ef_search` 50 in the source: no knob, one point);
//! - full text through `search` (tantivy BM25), hybrid through `ask` in its `Hybrid` mode with
//!   `context_only` (retrieval only), the question's vector handed over by a [`VecEmbedder`];
//! - delete by id with `delete_frame` (a tombstone in the log, synced); memvid has no delete by
//!   filter, so it is done as a user would: every frame's tags scanned, each match deleted, one
//!   `commit` at the end.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use mb_stores_data::{dir_bytes, peak_rss_mib, percentiles, record_bulk, Data};
use memvid_core::{
    AclEnforcementMode, AskMode, AskRequest, FrameStatus, Memvid, PutManyOpts, PutOptions,
    SearchRequest, VecEmbedder,
};
use serde_json::{json, Map, Value};

/// Records written one at a time (durably) after the bulk load, as in the other drivers.
const SINGLES: usize = 200;
/// Queries timed per search phase.
const QUERIES: usize = 200;
/// The source whose records the delete-by-filter phase removes.
const DELETE_SOURCE: &str = "locomo3";
/// Snippet length asked of text and hybrid search (the README's example).
const SNIPPET_CHARS: usize = 200;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(err) = run_main() {
        eprintln!("stores-memvid: {err}");
        std::process::exit(1);
    }
}

fn run_main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(data_dir), Some(n), Some(store)) = (args.get(1), args.get(2), args.get(3)) else {
        return Err("usage: stores-memvid DATA_DIR N STORE_DIR".into());
    };
    let n: usize = n.parse()?;
    let data = Data::load(Path::new(data_dir), n)?;
    let mut out = Map::new();
    out.insert("store".into(), json!("memvid-core 2.0.140 (Rust)"));
    out.insert("n".into(), json!(n));
    out.insert("durable".into(), json!("put: log appended and synced"));
    out.insert("rss_after_data_mib".into(), json!(peak_rss_mib()));
    std::fs::create_dir_all(store)?;
    run(&data, Path::new(store), &mut out)?;
    out.insert("peak_rss_mib".into(), json!(peak_rss_mib()));
    println!("{}", Value::Object(out));
    Ok(())
}

/// Hands `ask` the question's precomputed vector, as the other stores are handed theirs.
struct Precomputed<'a> {
    by_text: HashMap<&'a str, &'a [f32]>,
}

impl VecEmbedder for Precomputed<'_> {
    fn embed_query(&self, text: &str) -> memvid_core::Result<Vec<f32>> {
        self.by_text
            .get(text)
            .map(|v| v.to_vec())
            .ok_or(memvid_core::MemvidError::VecNotEnabled)
    }

    fn embedding_dimension(&self) -> usize {
        mb_stores_data::DIM
    }
}

fn options(data: &Data, i: usize) -> PutOptions {
    let row = &data.rows[i];
    PutOptions::builder()
        .uri(format!("mv2://records/{}", row.id))
        .tag("source", row.source.as_str())
        .tag("speaker", row.speaker.as_str())
        .build()
}

/// One line on stderr per phase, so that a slow phase shows while it runs.
fn phase(name: &str, since: Instant) {
    eprintln!(
        "stores-memvid: {name} at {:.1} s",
        since.elapsed().as_secs_f64()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn run(data: &Data, dir: &Path, out: &mut Map<String, Value>) -> Result<()> {
    let n = data.rows.len();
    let bulk = n - SINGLES;
    let file = dir.join("memory.mv2");
    let mut mem = Memvid::create(&file)?;
    mem.enable_lex()?;
    mem.enable_vec()?;
    let began = Instant::now();

    let start = Instant::now();
    mem.begin_batch(PutManyOpts::default())?;
    for i in 0..bulk {
        let mut opts = options(data, i);
        // What the batch API does for its documents: no soft index commit per put.
        opts.instant_index = false;
        mem.put_with_embedding_and_options(
            data.rows[i].text.as_bytes(),
            data.vector(i).to_vec(),
            opts,
        )?;
    }
    mem.end_batch()?;
    let written = start.elapsed();
    phase("bulk written", began);
    mem.commit()?;
    phase("bulk committed", began);
    mem.search_vec(data.query_vector(0), 10)?;
    let indexed = start.elapsed();
    // Vector search over the bulk-loaded records alone, before any single insert: after the
    // second commit (below) this version answers only from the records of that commit.
    let bulk_frames = rows_of_frames(&mem, data)?;
    let before_singles = vector_point(
        &mut mem,
        data,
        bulk,
        &bulk_frames,
        "ef 50 (fixed), bulk records only, before the single inserts",
    )?;
    record_bulk(out, bulk, written, indexed);

    let mut times = Vec::with_capacity(SINGLES);
    for i in bulk..n {
        let start = Instant::now();
        mem.put_with_embedding_and_options(
            data.rows[i].text.as_bytes(),
            data.vector(i).to_vec(),
            options(data, i),
        )?;
        times.push(start.elapsed());
    }
    phase("single inserts", began);
    let (p50, p99) = percentiles(&mut times);
    out.insert("insert_p50_ms".into(), json!(p50));
    out.insert("insert_p99_ms".into(), json!(p99));
    let start = Instant::now();
    mem.commit()?;
    out.insert(
        "after_inserts_s".into(),
        json!(start.elapsed().as_secs_f64()),
    );
    let row_of_frame = rows_of_frames(&mem, data)?;
    out.insert(
        "records_without_frame".into(),
        json!(n - row_of_frame.len()),
    );
    phase("committed", began);

    let queries = QUERIES.min(data.queries.len());
    let after = vector_point(&mut mem, data, n, &row_of_frame, "ef 50 (fixed)")?;
    out.insert("vector_curve".into(), json!([after, before_singles]));

    let mut times = Vec::with_capacity(queries);
    for q in 0..queries {
        let request = text_request(&data.queries[q].text);
        let start = Instant::now();
        std::hint::black_box(mem.search(request)?.hits.len());
        times.push(start.elapsed());
    }
    let (p50, p99) = percentiles(&mut times);
    phase("vector and text searches", began);
    out.insert("text_p50_ms".into(), json!(p50));
    out.insert("text_p99_ms".into(), json!(p99));

    let embedder = Precomputed {
        by_text: (0..queries)
            .map(|q| (data.queries[q].text.as_str(), data.query_vector(q)))
            .collect(),
    };
    // A failing `ask` is reported (the table then says "failed: ..." with its error), not fatal.
    let mut times = Vec::with_capacity(queries);
    for q in 0..queries {
        let request = hybrid_request(&data.queries[q].text);
        let start = Instant::now();
        match mem.ask(request, Some(&embedder)) {
            Ok(answer) => std::hint::black_box(answer.retrieval.hits.len()),
            Err(e) => {
                out.insert("hybrid_error".into(), json!(e.to_string()));
                break;
            }
        };
        times.push(start.elapsed());
    }
    if !out.contains_key("hybrid_error") {
        let (p50, p99) = percentiles(&mut times);
        out.insert("hybrid_p50_ms".into(), json!(p50));
        out.insert("hybrid_p99_ms".into(), json!(p99));
    }

    let frame_of_row: HashMap<u64, u64> = row_of_frame.iter().map(|(f, r)| (*r, *f)).collect();
    let mut times = Vec::with_capacity(100);
    for row in 0..100u64 {
        let Some(&frame) = frame_of_row.get(&row) else {
            continue;
        };
        let start = Instant::now();
        mem.delete_frame(frame)?;
        times.push(start.elapsed());
    }
    let (p50, p99) = percentiles(&mut times);
    out.insert("delete_id_p50_ms".into(), json!(p50));
    out.insert("delete_id_p99_ms".into(), json!(p99));
    let start = Instant::now();
    let deleted = delete_source(&mut mem, DELETE_SOURCE)?;
    mem.commit()?;
    out.insert("delete_filter_ms".into(), json!(ms(start.elapsed())));
    out.insert("delete_filter_count".into(), json!(deleted));
    phase("hybrid searches and deletes", began);
    drop(mem);

    out.insert("disk_mib".into(), json!(dir_bytes(dir) as f64 / 1048576.0));
    let start = Instant::now();
    let mut mem = Memvid::open(&file)?;
    let opened = start.elapsed();
    mem.search_vec(data.query_vector(0), 10)?;
    let first_vector = start.elapsed();
    mem.search(text_request(&data.queries[0].text))?;
    out.insert("reopen_ms".into(), json!(ms(opened)));
    out.insert("reopen_first_query_ms".into(), json!(ms(first_vector)));
    out.insert("reopen_first_text_ms".into(), json!(ms(start.elapsed())));
    Ok(())
}

/// Which record each frame holds, read back from the frames' URIs, so that recall is computed
/// against the right records. Not every `put` leaves a frame: in this version the first 25 puts
/// of a batch are missing after `commit` (seen at 400, 2 000 and 10 000 records), so the caller
/// reports how many records have none, and they count as misses in recall.
fn rows_of_frames(mem: &Memvid, data: &Data) -> Result<HashMap<u64, u64>> {
    let row_of_id: HashMap<u64, u64> = data
        .rows
        .iter()
        .enumerate()
        .map(|(row, r)| (r.id, row as u64))
        .collect();
    let mut out = HashMap::with_capacity(data.rows.len());
    for frame in 0..mem.frame_count() as u64 {
        let uri = mem.frame_by_id(frame)?.uri.unwrap_or_default();
        let id = uri
            .strip_prefix("mv2://records/")
            .and_then(|s| s.parse::<u64>().ok());
        if let Some(row) = id.and_then(|id| row_of_id.get(&id)) {
            out.insert(frame, *row);
        }
    }
    Ok(out)
}

/// Delete by filter, as memvid offers none: every active frame whose `source` tag matches.
fn delete_source(mem: &mut Memvid, source: &str) -> Result<usize> {
    let matching: Vec<u64> = (0..mem.frame_count() as u64)
        .filter_map(|id| mem.frame_by_id(id).ok())
        .filter(|f| {
            f.status == FrameStatus::Active
                && f.extra_metadata.get("source").map(String::as_str) == Some(source)
        })
        .map(|f| f.id)
        .collect();
    for &frame in &matching {
        mem.delete_frame(frame)?;
    }
    Ok(matching.len())
}

/// Times top-10 vector search over the benchmark's queries and measures recall@10 against
/// exact search over the first `upto` records; frames map to records through `row_of_frame`.
fn vector_point(
    mem: &mut Memvid,
    data: &Data,
    upto: usize,
    row_of_frame: &HashMap<u64, u64>,
    setting: &str,
) -> Result<Value> {
    let queries = QUERIES.min(data.queries.len());
    let (mut times, mut found) = (Vec::with_capacity(queries), 0usize);
    for q in 0..queries {
        let truth = data.exact_top(q, 10, upto);
        let start = Instant::now();
        let hits = mem.search_vec(data.query_vector(q), 10)?;
        times.push(start.elapsed());
        found += hits
            .iter()
            .filter(|h| {
                row_of_frame
                    .get(&h.frame_id)
                    .is_some_and(|r| truth.contains(r))
            })
            .count();
    }
    let (p50, p99) = percentiles(&mut times);
    let recall = found as f64 / (queries * 10) as f64;
    Ok(json!({"setting": setting, "p50_ms": p50, "p99_ms": p99, "recall": recall}))
}

/// A top-10 full-text request (`SearchRequest` has no `Default`, unlike its README's example).
/// Its query goes to tantivy's query parser, which refuses an unpaired `"` ("unterminated quoted
/// string"), so double quotes are dropped; the other stores take the question as it is.
fn text_request(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.replace('"', " "),
        top_k: 10,
        snippet_chars: SNIPPET_CHARS,
        uri: None,
        scope: None,
        cursor: None,
        as_of_frame: None,
        as_of_ts: None,
        no_sketch: false,
        acl_context: None,
        acl_enforcement_mode: AclEnforcementMode::Audit,
    }
}

/// A top-10 hybrid retrieval (no answer synthesis).
fn hybrid_request(question: &str) -> AskRequest {
    AskRequest {
        question: question.to_string(),
        top_k: 10,
        snippet_chars: SNIPPET_CHARS,
        uri: None,
        scope: None,
        cursor: None,
        start: None,
        end: None,
        context_only: true,
        mode: AskMode::Hybrid,
        as_of_frame: None,
        as_of_ts: None,
        adaptive: None,
        acl_context: None,
        acl_enforcement_mode: AclEnforcementMode::Audit,
    }
}
