//! Many namespaces in bounded memory: an agent platform's store with one namespace per user.
//!
//! `cargo bench --bench many_namespaces` builds a store of `MB_BENCH_NAMESPACES` (default
//! 100 000) namespaces × 20 records (each with a 64-dimensional vector), reopens it with a
//! derived-state budget of `MB_BENCH_BUDGET_MB` (default 64 MiB), and reports: the build rate,
//! the time to reopen, a cold namespace's first search (its BM25 statistics and vectors rebuilt
//! from the store) and a warm search, p50 and p99, and the process's resident memory before and
//! after cold searches over every namespace, beside the budget and the engine's own estimate;
//! and what listing every namespace costs beside listing one prefix's (`namespaces_under`).
//! The store is built by a child process (this benchmark run again with `MB_BENCH_BUILD=DIR`),
//! so the measuring process's memory holds nothing of the build. Writes during the build are
//! not synced one by one (the default `sync_writes = false`; the engine is closed at the end),
//! as a bulk import would run. Resident memory is shown as heap (anonymous) and mapped index
//! files (file-backed pages, which the kernel can drop at any time).

use std::time::{Duration, Instant};

use memorybench::engine::{Engine, EngineOptions, NamespaceOptions, NewRecord, Space};

const RECORDS: usize = 20;
const DIM: usize = 64;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A deterministic unit-ish vector for record `i` of namespace `ns`.
fn vector(ns: usize, i: usize) -> Vec<f32> {
    let mut state = (ns as u64) << 32 | i as u64;
    (0..DIM)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect()
}

const WORDS: [&str; 16] = [
    "coffee", "marathon", "sister", "wedding", "garden", "kiln", "dog", "paris", "budget", "piano",
    "job", "river", "cake", "train", "novel", "doctor",
];

fn text(ns: usize, i: usize) -> String {
    let w = |k: usize| WORDS[(ns * 7 + i * 3 + k) % WORDS.len()];
    format!(
        "user {ns} said something about {} and {} on day {i}",
        w(0),
        w(5)
    )
}

/// This process's resident memory in bytes: (anonymous, file-backed).
fn rss() -> (usize, usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<usize>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("RssAnon:"), field("RssFile:"))
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// Builds the store at `path`: every namespace with its records, then a clean close.
fn build(path: &std::path::Path, namespaces: usize) {
    let engine = Engine::open(path, EngineOptions::default()).expect("engine");
    engine.create_space(Space::new("s", DIM)).expect("space");
    for ns in 0..namespaces {
        let name = format!("user{ns}");
        engine
            .create_namespace(&name, NamespaceOptions::default())
            .expect("namespace");
        let records =
            (0..RECORDS).map(|i| NewRecord::new(text(ns, i)).with_vector("s", vector(ns, i)));
        engine.put_many(&name, records).expect("records");
    }
    engine.close().expect("close");
}

fn main() {
    let namespaces = env("MB_BENCH_NAMESPACES", 100_000);
    if let Ok(path) = std::env::var("MB_BENCH_BUILD") {
        build(std::path::Path::new(&path), namespaces);
        return;
    }
    let budget = env("MB_BENCH_BUDGET_MB", 64) << 20;
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("store");

    let started = Instant::now();
    let status = std::process::Command::new(std::env::current_exe().expect("this benchmark"))
        .env("MB_BENCH_BUILD", &path)
        .status()
        .expect("the build process");
    assert!(status.success(), "the build process failed");
    let built = started.elapsed();
    println!(
        "built {namespaces} namespaces x {RECORDS} records in {:.1} s ({:.0} records/s)",
        built.as_secs_f64(),
        (namespaces * RECORDS) as f64 / built.as_secs_f64()
    );

    let before_open = rss();
    let started = Instant::now();
    let mut options = EngineOptions::default();
    options.derived_memory_budget = Some(budget);
    let engine = Engine::open(&path, options).expect("reopen");
    println!("reopened in {:.2} s", started.elapsed().as_secs_f64());
    let opened = rss();

    // Cold: every namespace's first search, in a scattered order.
    let mut cold = Vec::with_capacity(namespaces);
    let stride = 7919 % namespaces.max(1);
    let mut ns = 0;
    for _ in 0..namespaces {
        ns = (ns + stride.max(1)) % namespaces;
        let name = format!("user{ns}");
        let query = vector(ns, 3);
        let started = Instant::now();
        let text_hits = engine
            .search_text(&name, "coffee marathon", 5)
            .expect("text");
        let vector_hits = engine.search_vector(&name, "s", &query, 5).expect("vector");
        cold.push(started.elapsed());
        assert!(!vector_hits.is_empty() && text_hits.len() <= 5);
    }
    let after_cold = rss();
    let resident = engine.resident();

    // Warm: the same few namespaces again and again.
    let mut warm = Vec::new();
    for round in 0..20_000 {
        let ns = round % 8;
        let name = format!("user{ns}");
        let query = vector(ns, 3);
        let started = Instant::now();
        engine
            .search_text(&name, "coffee marathon", 5)
            .expect("text");
        engine.search_vector(&name, "s", &query, 5).expect("vector");
        warm.push(started.elapsed());
    }

    // Listing: every namespace (what the MCP service read on each search to find the agents
    // keeping memories of a user) against one prefix's range (what it reads now).
    let mut all = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let listed = engine.namespaces().len();
        all.push(started.elapsed());
        assert_eq!(listed, namespaces);
    }
    let mut under = Vec::new();
    for round in 0..10_000 {
        let prefix = format!("user{}/", round % namespaces.max(1));
        let started = Instant::now();
        let listed = engine.namespaces_under(&prefix).len();
        under.push(started.elapsed());
        assert_eq!(listed, 0);
    }

    println!(
        "listing: every namespace p50 {:?}; one user's agents (a prefix's range) p50 {:?}",
        percentile(&mut all, 0.5),
        percentile(&mut under, 0.5)
    );
    println!(
        "cold first search (BM25 + vector): p50 {:?}, p99 {:?}",
        percentile(&mut cold, 0.5),
        percentile(&mut cold, 0.99)
    );
    println!(
        "warm search (BM25 + vector): p50 {:?}, p99 {:?}",
        percentile(&mut warm, 0.5),
        percentile(&mut warm, 0.99)
    );
    let show =
        |(heap, mapped): (usize, usize)| format!("{} heap + {} mapped", mib(heap), mib(mapped));
    println!(
        "resident memory: {} before opening, {} opened, {} after a search in every namespace",
        show(before_open),
        show(opened),
        show(after_cold),
    );
    println!(
        "derived-state budget {}; engine estimate {} in {} namespaces, {} evictions",
        mib(budget),
        mib(resident.bytes),
        resident.namespaces,
        resident.evictions
    );
    engine.close().expect("close");
}
