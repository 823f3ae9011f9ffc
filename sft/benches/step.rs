//! Seconds per optimizer step and peak memory of SFT on the real SmolLM2-135M, on this
//! machine's CPU: batches of 4 examples of 128, 256 and 512 tokens (half of each learned, as an
//! answer after its prompt), run through the real training loop ([`mb_sft::train`]), beside
//! the forward pass alone. `cargo bench -p mb-sft --bench step`; docs/benchmarks.md ("SFT")
//! holds the numbers.

use std::path::Path;
use std::time::Instant;

use candle_core::Device;
use mb_sft::{train, Example, GgufFile, LoraLlama, LoraSettings, RunDir, Targets, TrainSettings};

const MODEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../.cache/models/smollm2-135m-instruct-q4_1/model.gguf"
);
const LENGTHS: [usize; 3] = [128, 256, 512];
const BATCH: usize = 4;
/// Steps measured per length (each a whole batch of 4).
const STEPS: usize = 3;

/// The process's peak resident memory so far, in MiB (`VmHWM`).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// `BATCH` examples of `length` tokens whose second half is learned.
fn examples(length: usize, vocab: usize) -> Vec<Example> {
    (0..BATCH)
        .map(|i| {
            let ids: Vec<u32> = (0..length)
                .map(|t| ((t * 7919 + i * 104_729) % vocab) as u32)
                .collect();
            let start = length / 2;
            Example {
                test_idx: i as u64,
                targets: Targets {
                    positions: (start as u32 - 1..length as u32 - 1).collect(),
                    tokens: ids[start..].to_vec(),
                },
                ids,
            }
        })
        .collect()
}

fn main() -> mb_sft::Result<()> {
    if !Path::new(MODEL).is_file() {
        eprintln!("skipped: {MODEL} is absent (run bash scripts/setup.sh)");
        return Ok(());
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let started = Instant::now();
    let mut file = GgufFile::open(Path::new(MODEL))?;
    let model = LoraLlama::load(&mut file, LoraSettings::default(), 42, &Device::Cpu)?;
    println!(
        "SmolLM2-135M dequantized to f32 in {:.1} s on {threads} threads; peak RSS {:.0} MiB",
        started.elapsed().as_secs_f64(),
        peak_rss_mib()
    );
    println!(
        "| tokens per example | forward s/example | s/step (batch 4) | learned tokens/s | peak RSS MiB |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for length in LENGTHS {
        let batch = examples(length, model.config().vocab);
        let started = Instant::now();
        for example in &batch {
            model.nll_sum(&example.ids, &example.targets, None)?;
        }
        let forward = started.elapsed().as_secs_f64() / BATCH as f64;
        let dir = tempfile::tempdir().map_err(|e| mb_sft::SftError::Io {
            path: std::env::temp_dir(),
            source: e,
        })?;
        let run = RunDir::open(dir.path(), &serde_json::json!({ "length": length }))?;
        let settings = TrainSettings {
            epochs: STEPS + 1,
            ..TrainSettings::default()
        };
        let state = train(&model, &batch, &settings, &run, &mut |_| {})?;
        // The first step warms up the allocator and caches.
        let measured: Vec<f64> = state.steps[1..].iter().map(|s| s.seconds).collect();
        let per_step = measured.iter().sum::<f64>() / measured.len() as f64;
        let learned: usize = batch.iter().map(Example::learned).sum();
        println!(
            "| {length} | {forward:.2} | {per_step:.2} | {:.0} | {:.0} |",
            learned as f64 / per_step,
            peak_rss_mib()
        );
    }
    Ok(())
}
