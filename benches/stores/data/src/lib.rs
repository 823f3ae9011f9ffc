//! The stores benchmark's data set (`benches/stores/prepare.py` writes it), latency summaries
//! and process measurements: what every Rust driver shares, the engine's and memvid-core's
//! alike. memvid-core's driver (`benches/stores/memvid/`, a crate outside the workspace)
//! depends on this crate, so it depends on nothing but the standard library, serde and
//! serde_json: no workspace crate (`tests/it/outside_crates.rs` checks it).

use std::fs;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

/// Dimension of the cached MiniLM vectors.
pub const DIM: usize = 384;

/// One prepared record: a turn or a window of consecutive turns.
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    /// Position in the data set (also the id peers store it under).
    pub id: u64,
    /// The record's text.
    pub text: String,
    /// The show (DialSim) or LoCoMo sample it comes from.
    pub source: String,
    /// The first turn's speaker.
    pub speaker: String,
}

/// A query: a LoCoMo question.
#[derive(Debug, Clone, Deserialize)]
pub struct Query {
    /// The question's text.
    pub text: String,
}

/// The prepared data set, cut to `n` records.
pub struct Data {
    /// The records, in id order.
    pub rows: Vec<Row>,
    /// `rows.len() × DIM` floats, row-major.
    pub vectors: Vec<f32>,
    /// The queries.
    pub queries: Vec<Query>,
    /// `queries.len() × DIM` floats.
    pub query_vectors: Vec<f32>,
}

impl Data {
    /// Reads the first `n` records (and every query) of the data set in `dir`.
    pub fn load(dir: &Path, n: usize) -> io::Result<Data> {
        let rows: Vec<Row> = read_jsonl(&dir.join("records.jsonl"), n)?;
        if rows.len() < n {
            return Err(io::Error::other(format!(
                "{} holds {} records, {n} asked (run prepare.py with a larger --max)",
                dir.display(),
                rows.len()
            )));
        }
        let vectors = read_f32(&dir.join("vectors.f32"), n * DIM)?;
        let queries: Vec<Query> = read_jsonl(&dir.join("queries.jsonl"), usize::MAX)?;
        let query_vectors = read_f32(&dir.join("query_vectors.f32"), queries.len() * DIM)?;
        Ok(Data {
            rows,
            vectors,
            queries,
            query_vectors,
        })
    }

    /// The vector of record `i`.
    pub fn vector(&self, i: usize) -> &[f32] {
        &self.vectors[i * DIM..(i + 1) * DIM]
    }

    /// The vector of query `i`.
    pub fn query_vector(&self, i: usize) -> &[f32] {
        &self.query_vectors[i * DIM..(i + 1) * DIM]
    }

    /// The exact top `k` record ids of query `q` by cosine (vectors are normalized), among the
    /// first `among` records (a store's state before its later inserts).
    pub fn exact_top(&self, q: usize, k: usize, among: usize) -> Vec<u64> {
        let query = self.query_vector(q);
        let mut scored: Vec<(f32, u64)> = (0..among.min(self.rows.len()))
            .map(|i| {
                let dot: f32 = self.vector(i).iter().zip(query).map(|(a, b)| a * b).sum();
                (dot, i as u64)
            })
            .collect();
        let order = |a: &(f32, u64), b: &(f32, u64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if k < scored.len() {
            scored.select_nth_unstable_by(k, order);
            scored.truncate(k);
        }
        scored.sort_by(order);
        // Collected from a borrowing iterator: `into_iter().collect()` would reuse the
        // scores' allocation in place, and every answer would keep its 1.6 MB (at 100k
        // records) for ten ids: 260 MiB of the benchmark's own in the engine's peak RSS.
        scored.iter().map(|&(_, i)| i).collect()
    }
}

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path, limit: usize) -> io::Result<Vec<T>> {
    let file = fs::File::open(path)?;
    let mut out = Vec::new();
    for line in BufReader::new(file).lines() {
        if out.len() >= limit {
            break;
        }
        out.push(serde_json::from_str(&line?).map_err(io::Error::other)?);
    }
    Ok(out)
}

/// The first `count` little-endian floats of the file at `path`, read a block at a time into
/// the vector they end in: the whole file read first would leave its bytes, freed, as a hole
/// in the peak RSS that counts as "the data alone", which the engine's memory then fills
/// unseen (146 MiB at 100k records).
fn read_f32(path: &Path, count: usize) -> io::Result<Vec<f32>> {
    const BLOCK: usize = 1 << 16;
    let short = || io::Error::other(format!("{} is shorter than {count} floats", path.display()));
    let mut file = fs::File::open(path)?;
    let mut out = Vec::with_capacity(count);
    let mut bytes = vec![0u8; BLOCK * 4];
    while out.len() < count {
        let floats = BLOCK.min(count - out.len());
        let block = &mut bytes[..floats * 4];
        file.read_exact(block).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => short(),
            _ => e,
        })?;
        out.extend(
            block
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
    }
    Ok(out)
}

/// p50 and p99 of a set of latencies, in milliseconds.
pub fn percentiles(samples: &mut [Duration]) -> (f64, f64) {
    if samples.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    samples.sort_unstable();
    let at = |p: f64| {
        let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
        samples[i].as_secs_f64() * 1e3
    };
    (at(0.50), at(0.99))
}

/// The median of `values`, the mean of the middle two when their number is even (as numpy's,
/// which `worker.py` uses); NaN when there are none.
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Mean of a set of latencies, in milliseconds.
pub fn mean_ms(samples: &[Duration]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.iter().map(Duration::as_secs_f64).sum::<f64>() * 1e3 / samples.len() as f64
}

/// The process's peak resident set (`VmHWM`), in MiB, or `None` off Linux.
pub fn peak_rss_mib() -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Bytes of every file under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

/// Records the bulk-load phase as every driver reports it (`worker.py` too): seconds until the
/// records were written, seconds until every index was built, and records per second until then.
pub fn record_bulk(
    out: &mut serde_json::Map<String, serde_json::Value>,
    records: usize,
    written: Duration,
    indexed: Duration,
) {
    out.insert("bulk_write_s".into(), written.as_secs_f64().into());
    out.insert("bulk_indexed_s".into(), indexed.as_secs_f64().into());
    out.insert(
        "bulk_rate".into(),
        (records as f64 / indexed.as_secs_f64()).into(),
    );
}
