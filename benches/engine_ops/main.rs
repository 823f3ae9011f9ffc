//! Latency profile of the engine's memory operations (criterion).
//!
//! `cargo bench --bench engine_ops` — text analysis (every write and delete analyses its
//! record's text), insert (single and batched), write throughput with 1, 2 and
//! 4 writer threads on namespaces of their own, BM25 search and vector search
//! (exact and HNSW) at 1k, 10k and 100k memories, vectors of dimension 384. Texts are
//! synthetic chat-like messages drawn from a Zipf-distributed vocabulary, or with
//! `MB_BENCH_TEXT=dialsim` real turns searched with real questions (ids then end in `-dialsim`;
//! see `texts.rs` beside it); vectors are random
//! points near a random 32-dimensional subspace, shaped like sentence embeddings (uniformly
//! random 384-d vectors have no neighbourhood structure for a graph index to exploit; set
//! `MB_BENCH_UNIFORM=1` to measure that worst case). `MB_BENCH_SIZES=1000,10000` limits the
//! sizes. The HNSW recall@10 at each size is printed alongside. `MB_BENCH_IDF=lucene` scores
//! BM25 with Lucene's idf instead of Whoosh's (which allows tantivy's block-max WAND pruning);
//! `MB_BENCH_MERGE=1` merges the lexical index into one segment before BM25 is timed.
//! `MB_BENCH_EF_CONSTRUCTION` overrides the HNSW build's default (a cheaper build for a
//! million vectors, say); `MB_BENCH_EF_SEARCH=64,96,192` measures HNSW search at each beam
//! width over one graph (default: the engine's), each as `vector_top10/hnsw-ef<ef>/<n>`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mb_core::test_vectors::{self, EmbeddingLike};
use memorybench::engine::lexical::Idf;
use memorybench::engine::{Engine, EngineOptions, HnswParams, NamespaceOptions, NewRecord, Space};
use memorybench::text::Analyzer;
use rand::rngs::StdRng;
use rand::SeedableRng;

mod texts;

use texts::Texts;

const DIM: usize = 384;

fn unit(rng: &mut StdRng) -> Vec<f32> {
    test_vectors::unit(rng, DIM)
}

/// Vector generator: embedding-like (near a random 32-d subspace), or uniform when
/// `MB_BENCH_UNIFORM=1`.
struct Vectors(Option<EmbeddingLike>);

impl Vectors {
    fn new(rng: &mut StdRng) -> Self {
        let uniform = std::env::var("MB_BENCH_UNIFORM").is_ok_and(|v| v == "1");
        Vectors((!uniform).then(|| EmbeddingLike::new(rng, DIM, 32)))
    }

    fn sample(&self, rng: &mut StdRng) -> Vec<f32> {
        match &self.0 {
            Some(space) => space.sample(rng),
            None => unit(rng),
        }
    }
}

fn sizes() -> Vec<usize> {
    std::env::var("MB_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000])
}

fn open(dir: &std::path::Path, hnsw_threshold: usize) -> Engine {
    let options = {
        let mut options_ = EngineOptions::default();
        options_.hnsw = {
            let mut built = HnswParams::default();
            built.threshold = hnsw_threshold;
            let knob = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
            if let Some(ef) = knob("MB_BENCH_EF_CONSTRUCTION") {
                built.ef_construction = ef;
            }
            built
        };
        options_.bm25_idf = match std::env::var("MB_BENCH_IDF").as_deref() {
            Ok("lucene") => Idf::Lucene,
            _ => Idf::Whoosh,
        };
        options_
    };
    let engine = Engine::open(dir, options).unwrap();
    engine
        .create_namespace("bench", NamespaceOptions::default())
        .unwrap();
    engine.create_space(Space::new("s", DIM)).unwrap();
    engine
}

/// The analyzers over 1 000 messages: what each write pays per record before the store sees
/// it, and (`terms only`) what each delete pays to take the record out of the BM25 statistics.
fn analyze(c: &mut Criterion) {
    let texts = Texts::from_env();
    let mut rng = StdRng::seed_from_u64(1);
    let messages: Vec<String> = (0..1000).map(|_| texts.message(&mut rng)).collect();
    let mut group = c.benchmark_group(format!("analyze{}", texts.suffix()));
    group.throughput(Throughput::Elements(messages.len() as u64));
    for analyzer in [Analyzer::Standard, Analyzer::Stemmed] {
        group.bench_function(format!("{analyzer:?}").to_lowercase(), |b| {
            b.iter(|| {
                messages
                    .iter()
                    .map(|m| analyzer.analyze(m).len())
                    .sum::<usize>()
            })
        });
        let name = format!("{analyzer:?} terms only").to_lowercase();
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut bytes = 0;
                for m in &messages {
                    analyzer.for_each_term(m, |term| bytes += term.len());
                }
                bytes
            })
        });
    }
    group.finish();
}

fn insert(c: &mut Criterion) {
    let texts = Texts::from_env();
    let mut rng = StdRng::seed_from_u64(1);
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir.path().join("e"), usize::MAX);
    // A namespace's BM25 statistics and vector collection exist once it has been searched;
    // from then on every write maintains them. Search first, so each insert below pays for
    // what its label says: the write batch, the WAL, the lexical index and the vector index.
    engine.search_text("bench", "warm", 1).unwrap();
    engine
        .search_vector("bench", "s", &unit(&mut rng), 1)
        .unwrap();
    let mut group = c.benchmark_group(format!("insert{}", texts.suffix()));
    group.throughput(Throughput::Elements(1));
    group.bench_function("single", |b| {
        b.iter_batched(
            || NewRecord::new(texts.message(&mut rng)),
            |r| engine.put("bench", r).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("single_with_vector", |b| {
        b.iter_batched(
            || NewRecord::new(texts.message(&mut rng)).with_vector("s", unit(&mut rng)),
            |r| engine.put("bench", r).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.throughput(Throughput::Elements(1000));
    group.bench_function("batch_1000", |b| {
        b.iter_batched(
            || {
                (0..1000)
                    .map(|_| NewRecord::new(texts.message(&mut rng)))
                    .collect::<Vec<_>>()
            },
            |rs| engine.put_many("bench", rs).unwrap(),
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// Engine with `n` short messages in namespace `bench` and as many in `other` (per-namespace
/// scoring must ignore them), committed; plus 64 queries.
fn lexical_fixture(texts: &Texts, n: usize) -> (tempfile::TempDir, Engine, Vec<String>) {
    let mut rng = StdRng::seed_from_u64(2);
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir.path().join("e"), usize::MAX);
    engine
        .create_namespace("other", NamespaceOptions::default())
        .unwrap();
    for _ in 0..n / 1000 {
        engine
            .put_many(
                "bench",
                (0..1000).map(|_| NewRecord::new(texts.message(&mut rng))),
            )
            .unwrap();
        engine
            .put_many(
                "other",
                (0..1000).map(|_| NewRecord::new(texts.message(&mut rng))),
            )
            .unwrap();
    }
    if std::env::var("MB_BENCH_MERGE").is_ok_and(|v| v == "1") {
        engine.merge_lexical_segments().unwrap();
    } else {
        engine.flush().unwrap();
    }
    // The namespace's BM25 statistics are built by its first search: build them before the
    // clock starts, so that criterion's warm-up estimates warm searches.
    engine.search_text("bench", "warm", 1).unwrap();
    let queries = (0..64).map(|_| texts.query(&mut rng)).collect();
    (dir, engine, queries)
}

fn lexical_search(c: &mut Criterion) {
    let texts = Texts::from_env();
    let mut group = c.benchmark_group(format!("bm25_top10{}", texts.suffix()));
    for n in sizes() {
        // Built on first use, so a filtered-out benchmark costs nothing.
        let mut fixture = None;
        let mut i = 0;
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            let (_, engine, queries) = fixture.get_or_insert_with(|| lexical_fixture(&texts, n));
            b.iter(|| {
                i = (i + 1) % queries.len();
                engine.search_text("bench", &queries[i], 10).unwrap()
            })
        });
    }
    group.finish();
}

/// Engine with `data` in namespace `bench`, vectors searched exactly or through HNSW.
fn vector_fixture(data: &[Vec<f32>], hnsw: bool) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir.path().join("e"), if hnsw { 1 } else { usize::MAX });
    for chunk in data.chunks(1000) {
        engine
            .put_many(
                "bench",
                chunk
                    .iter()
                    .map(|v| NewRecord::new("m").with_vector("s", v.clone())),
            )
            .unwrap();
    }
    engine.flush().unwrap();
    // First search loads the collection (and starts the graph build); wait for it.
    let started = std::time::Instant::now();
    engine.search_vector("bench", "s", &data[0], 1).unwrap();
    engine.flush().unwrap();
    if hnsw {
        eprintln!(
            "HNSW load and build at n={}: {:.1} s",
            data.len(),
            started.elapsed().as_secs_f64()
        );
    }
    (dir, engine)
}

fn top10(engine: &Engine, q: &[f32]) -> Vec<u64> {
    engine
        .search_vector("bench", "s", q, 10)
        .unwrap()
        .iter()
        .map(|h| h.record.id.0)
        .collect()
}

/// The beam widths `MB_BENCH_EF_SEARCH` asks for (empty: the engine's default only).
fn ef_sweep() -> Vec<usize> {
    std::env::var("MB_BENCH_EF_SEARCH")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_default()
}

fn vector_search(c: &mut Criterion) {
    let mut group = c.benchmark_group("vector_top10");
    let sweep = ef_sweep();
    for n in sizes() {
        let mut rng = StdRng::seed_from_u64(3);
        let vectors = Vectors::new(&mut rng);
        let data: Vec<Vec<f32>> = (0..n).map(|_| vectors.sample(&mut rng)).collect();
        let queries: Vec<Vec<f32>> = (0..200).map(|_| vectors.sample(&mut rng)).collect();
        // Built on first use, so a filtered-out benchmark costs nothing.
        let mut exact = None;
        let mut i = 0;
        group.bench_function(BenchmarkId::new("exact", n), |b| {
            let (_, engine) = exact.get_or_insert_with(|| vector_fixture(&data, false));
            b.iter(|| {
                i = (i + 1) % queries.len();
                engine.search_vector("bench", "s", &queries[i], 10).unwrap()
            })
        });
        let mut graph = None;
        let widths: Vec<Option<usize>> = if sweep.is_empty() {
            vec![None]
        } else {
            sweep.iter().copied().map(Some).collect()
        };
        for ef in widths {
            let id = match ef {
                Some(ef) => BenchmarkId::new(format!("hnsw-ef{ef}"), n),
                None => BenchmarkId::new("hnsw", n),
            };
            // Criterion calls the routine more than once; recall is measured on the first call.
            let mut measured = false;
            group.bench_function(id, |b| {
                let (_, engine, truth) = graph.get_or_insert_with(|| {
                    let (dir, engine) = vector_fixture(&data, true);
                    let (_exact_dir, exact) = vector_fixture(&data, false);
                    let truth: Vec<Vec<u64>> = queries.iter().map(|q| top10(&exact, q)).collect();
                    (dir, engine, truth)
                });
                if let Some(ef) = ef {
                    engine.set_ef_search(ef);
                }
                if !std::mem::replace(&mut measured, true) {
                    let found: usize = queries
                        .iter()
                        .zip(truth.iter())
                        .map(|(q, truth)| {
                            let hits = top10(engine, q);
                            hits.iter().filter(|x| truth.contains(x)).count()
                        })
                        .sum();
                    eprintln!(
                        "HNSW recall@10 at n={n}, ef {}: {:.4}",
                        ef.map_or("default".to_string(), |ef| ef.to_string()),
                        found as f64 / (10 * queries.len()) as f64
                    );
                }
                b.iter(|| {
                    i = (i + 1) % queries.len();
                    engine.search_vector("bench", "s", &queries[i], 10).unwrap()
                })
            });
        }
    }
    group.finish();
}

/// Records each writer puts per measured round in [`parallel_writers`].
const WRITES_PER_ROUND: usize = 1000;

/// Write throughput with 1, 2 and 4 threads, each putting single records (text and a 384-d
/// vector) into a namespace of its own, searched first so that both indexes are maintained.
/// Every round starts from a fresh engine (opened before the clock starts), so rounds compare.
fn parallel_writers(c: &mut Criterion) {
    let texts = Texts::from_env();
    let mut group = c.benchmark_group(format!("parallel_writers{}", texts.suffix()));
    group.sample_size(10);
    for writers in [1usize, 2, 4] {
        let mut rng = StdRng::seed_from_u64(7);
        // Each writer's records are made before the clock starts.
        let rounds: Vec<Vec<NewRecord>> = (0..writers)
            .map(|_| {
                (0..WRITES_PER_ROUND)
                    .map(|_| {
                        NewRecord::new(texts.message(&mut rng)).with_vector("s", unit(&mut rng))
                    })
                    .collect()
            })
            .collect();
        group.throughput(Throughput::Elements((writers * WRITES_PER_ROUND) as u64));
        group.bench_function(BenchmarkId::from_parameter(writers), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let dir = tempfile::tempdir().unwrap();
                    let engine = open(&dir.path().join("e"), usize::MAX);
                    for w in 0..writers {
                        let ns = format!("writer-{w}");
                        engine
                            .create_namespace(&ns, NamespaceOptions::default())
                            .unwrap();
                        engine.search_text(&ns, "warm", 1).unwrap();
                        engine
                            .search_vector(&ns, "s", &rounds[0][0].vectors[0].1, 1)
                            .unwrap();
                    }
                    let started = std::time::Instant::now();
                    std::thread::scope(|scope| {
                        for (w, records) in rounds.iter().enumerate() {
                            let engine = &engine;
                            scope.spawn(move || {
                                let ns = format!("writer-{w}");
                                for record in records {
                                    engine.put(&ns, record.clone()).unwrap();
                                }
                            });
                        }
                    });
                    total += started.elapsed();
                    engine.close().unwrap();
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = analyze, insert, parallel_writers, lexical_search, vector_search
}
criterion_main!(benches);
