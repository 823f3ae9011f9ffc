//! Measures `OnnxEmbedder` throughput on a list of texts; driven by
//! `benches/embed_throughput.py`, which runs the same texts through Python onnxruntime.
//!
//! ```sh
//! cargo run --release -p mb-embed --example embed_throughput -- --texts texts.json --batch-size 32
//! ```
//! Prints one JSON object: texts, tokens, seconds, sentences_per_s, tokens_per_s.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use mb_embed::{Embedder, OnnxConfig, OnnxEmbedder, OptimizationLevel};

#[derive(Parser)]
struct Args {
    /// JSON file holding an array of texts.
    #[arg(long)]
    texts: PathBuf,
    /// Texts per inference call.
    #[arg(long, default_value_t = 32)]
    batch_size: usize,
    /// Most padded tokens per inference call.
    #[arg(long, default_value_t = 512)]
    max_batch_tokens: usize,
    /// Sessions (parallel batches).
    #[arg(long, default_value_t = 2)]
    sessions: usize,
    /// ONNX Runtime intra-op threads per session.
    #[arg(long, default_value_t = 1)]
    intra_threads: usize,
    /// Graph optimization: disable, basic, extended or all.
    #[arg(long, default_value = "all")]
    optimization: String,
    /// Threads of the session that embeds a lone text (1: lone texts go to the pool).
    #[arg(long, default_value_t = 2)]
    solo_threads: usize,
    /// Embed the texts one call each, as queries arrive, and report the latency p50.
    #[arg(long)]
    one_at_a_time: bool,
    /// Keep measuring whole passes over the texts for at least this many seconds.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let texts: Vec<String> = serde_json::from_str(&std::fs::read_to_string(&args.texts)?)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut config = OnnxConfig::default_model()?;
    config.batch_size = args.batch_size;
    config.max_batch_tokens = args.max_batch_tokens;
    config.sessions = args.sessions;
    config.intra_threads = args.intra_threads;
    config.solo_threads = args.solo_threads;
    config.optimization = serde_json::from_value(serde_json::json!(args.optimization))?;
    let optimization: OptimizationLevel = config.optimization;
    let embedder = OnnxEmbedder::new(config)?;

    let tokens: usize = refs
        .iter()
        .map(|t| embedder.token_count(t))
        .sum::<Result<usize, _>>()?;
    embedder.embed(&refs)?; // warm-up: allocator arenas, caches
    if args.one_at_a_time {
        let mut latencies = Vec::with_capacity(refs.len());
        for text in &refs {
            let start = Instant::now();
            embedder.embed(&[text])?;
            latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        latencies.sort_by(f64::total_cmp);
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
        println!(
            "{}",
            serde_json::json!({
                "runtime": "rust",
                "solo_threads": args.solo_threads,
                "queries": latencies.len(),
                "p50_ms": at(0.5),
                "p95_ms": at(0.95),
            })
        );
        return Ok(());
    }
    let budget = Duration::from_secs_f64(args.seconds);
    let start = Instant::now();
    let mut passes = 0usize;
    while passes == 0 || start.elapsed() < budget {
        embedder.embed(&refs)?;
        passes += 1;
    }
    let seconds = start.elapsed().as_secs_f64();
    let report = serde_json::json!({
        "runtime": "rust",
        "batch_size": args.batch_size,
        "max_batch_tokens": args.max_batch_tokens,
        "sessions": args.sessions,
        "intra_threads": args.intra_threads,
        "optimization": optimization,
        "texts": texts.len() * passes,
        "tokens": tokens * passes,
        "seconds": seconds,
        "sentences_per_s": (texts.len() * passes) as f64 / seconds,
        "tokens_per_s": (tokens * passes) as f64 / seconds,
    });
    println!("{report}");
    Ok(())
}
