//! How each memory system's costs grow with the length of the conversation it memorizes.
//!
//! `cargo bench --bench cost_growth` memorizes the first 1 000, 5 000 and all (≈19 000) turns
//! of DialSim's The Office transcripts (`../shared/data/dialsim/dialsim_corpus_theoffice.txt`;
//! skipped, saying so, without it) into a fresh engine per system and size, and reports the
//! memorization cost per 1 000 turns and the retrieval latency (p50 over 50 questions made of
//! turns of the conversation) at each size. Engine side only: the LLM roles are offline and the
//! embedder is the model-free hashing one, so what grows is the memory's own work.
//! `MB_BENCH_SYSTEMS=bm25_message,mem0` limits the systems; `MB_BENCH_TURNS=1000,5000` the sizes.
//! MemoryOS at upstream parity drops every DialSim turn (each has one empty side);
//! `MB_BENCH_KEEP_ONE_SIDED=1` files them as pages (`keep_one_sided`), so its tiers grow.
//! `MB_BENCH_HNSW_THRESHOLD=N` sets the engine's HNSW threshold (default 5 000 vectors; a huge
//! value searches every collection exactly), to tell the graph's cost from the rest.
//! Every memorization is repeated in rounds (five, `MB_BENCH_REPEATS=N`; a fresh engine each
//! time), the sizes taking turns within a round, and a size's median over the rounds is kept,
//! with the fastest and slowest round beside it. Within a round a memorization shorter than
//! half a second is run again until its runs have taken that long, ten runs at most (their
//! median is the round's). The growth is the median of the rounds' own ratios, largest size
//! over smallest.
//! Single runs, one size after the other, moved the ratio by a third from run to run (the
//! spread is in docs/benchmarks.md). Besides the Markdown table on stdout, the
//! numbers go to `target/cost_growth/cost_growth.csv` and a plot of both curves per system to
//! `target/cost_growth/cost_growth.svg` (the one in `docs/img/` is a copy).

use std::sync::Arc;
use std::time::{Duration, Instant};

use memorybench::baselines::memoryos::MemoryOsSettings;
use memorybench::baselines::{registry, MemoryContext, SystemSettings, SystemSpec};
use memorybench::core::Lang;
use memorybench::datasets::corpus::{parse_dialsim, Conversation};
use memorybench::datasets::dataset::CorpusFormat;
use memorybench::embed::{Embedder, HashingEmbedder};
use memorybench::engine::{Engine, EngineOptions};
use memorybench::llm::{CacheMode, LlmSettings, LlmStack};
use plotters::prelude::*;

/// Repeats of each memorization unless `MB_BENCH_REPEATS` says otherwise (the median is kept).
const REPEATS: usize = 5;
/// The most repeats `MB_BENCH_REPEATS` may ask for.
const MAX_REPEATS: usize = 100;
/// Within a round, a memorization is run again until its runs have taken this long, and their
/// median is the round's figure: Mem0's 1 000 turns take 70 ms, which one slow moment doubles.
const ROUND_TIME: Duration = Duration::from_millis(500);
/// At most this many runs of a size make one round: a memorization of 10 ms would otherwise
/// take fifty, each with its engine opened and closed and its questions asked.
const ROUND_RUNS_MAX: usize = 10;

/// One measurement: a system at one size.
struct Row {
    system: &'static str,
    turns: usize,
    memorize: Duration,
    /// The fastest and the slowest of the repeats.
    fastest: Duration,
    slowest: Duration,
    per_thousand_s: f64,
    retrieval_p50: Duration,
}

/// The first `turns` turns of `conversation`, sessions cut where the count ends.
fn first_turns(conversation: &Conversation, turns: usize) -> Conversation {
    let mut left = turns;
    let mut cut = conversation.clone();
    cut.sessions.retain_mut(|session| {
        if left == 0 {
            return false;
        }
        session.turns.truncate(left);
        left -= session.turns.len();
        true
    });
    cut
}

/// What every memorization shares: the offline LLM roles, MemoryOS's settings, the runtime
/// and the retrieval questions.
struct Bench {
    llm: Arc<LlmStack>,
    memoryos_settings: SystemSettings,
    runtime: tokio::runtime::Runtime,
    questions: Vec<String>,
}

impl Bench {
    /// Memorizes `conversation` with `spec`'s system in a fresh engine, then asks every
    /// question: the memorization's time and each retrieval's.
    fn once(&self, spec: &SystemSpec, conversation: &Conversation) -> (Duration, Vec<Duration>) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let engine =
            Arc::new(Engine::open(dir.path().join("engine"), engine_options()).expect("engine"));
        let context = MemoryContext {
            engine,
            namespace: spec.name.to_string(),
            llm: self.llm.clone(),
            embedder: Some(Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>),
            lang: Lang::En,
            // MemoryOS's own settings; the other systems read the defaults.
            settings: if spec.name == "memoryos" {
                self.memoryos_settings.clone()
            } else {
                SystemSettings::default()
            },
            date: "2023-05-08".to_string(),
        };
        let memory = spec.build(context).expect("memory");
        let started = Instant::now();
        self.runtime
            .block_on(memory.memorize_corpus(conversation, CorpusFormat::DialSim))
            .expect("memorized");
        let memorized = started.elapsed();
        let retrievals = self
            .questions
            .iter()
            .map(|q| {
                let started = Instant::now();
                self.runtime
                    .block_on(memory.retrieve(q, Lang::En, 5))
                    .expect("retrieved");
                started.elapsed()
            })
            .collect();
        (memorized, retrievals)
    }
}

fn p50(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The engine's options: the defaults, with `MB_BENCH_HNSW_THRESHOLD` applied.
fn engine_options() -> EngineOptions {
    let mut options = EngineOptions::default();
    if let Some(threshold) = std::env::var("MB_BENCH_HNSW_THRESHOLD")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.hnsw.threshold = threshold;
    }
    options
}

fn main() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/dialsim/dialsim_corpus_theoffice.txt");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "skipped: {} not found (the shared test data)",
            path.display()
        );
        return;
    };
    let whole = parse_dialsim(&text);
    let sizes: Vec<usize> = std::env::var("MB_BENCH_TURNS")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 5_000, whole.turn_count()]);
    let wanted = std::env::var("MB_BENCH_SYSTEMS").ok();
    let repeats = match std::env::var("MB_BENCH_REPEATS") {
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_REPEATS).contains(&n) => n,
            _ => {
                eprintln!("MB_BENCH_REPEATS: {v:?} is not a count from 1 to {MAX_REPEATS}");
                std::process::exit(2);
            }
        },
        Err(_) => REPEATS,
    };
    let keep_one_sided = std::env::var("MB_BENCH_KEEP_ONE_SIDED").is_ok_and(|v| v == "1");
    let memoryos_settings = SystemSettings::default()
        .with_own(&MemoryOsSettings::default().keeping_one_sided(keep_one_sided))
        .expect("MemoryOS settings");
    let llm = Arc::new(
        LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).expect("offline roles"),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let questions: Vec<String> = whole
        .sessions
        .iter()
        .flat_map(|s| &s.turns)
        .step_by(whole.turn_count().max(50) / 50)
        .take(50)
        .map(|t| t.text.clone())
        .collect();

    let bench = Bench {
        llm,
        memoryos_settings,
        runtime,
        questions,
    };
    println!(
        "Medians of {repeats} rounds (a fresh engine each run), the fastest and slowest round beside.\n"
    );
    println!("| system | turns | memorize | fastest – slowest | per 1 000 turns | retrieval p50 |");
    println!("|---|---|---|---|---|---|");
    let mut rows: Vec<Row> = Vec::new();
    for spec in registry::REGISTRY {
        if spec.memoryless
            || wanted
                .as_ref()
                .is_some_and(|w| !w.split(',').any(|s| s == spec.name))
        {
            continue;
        }
        // The sizes take turns within each round, so that a machine slower for a while
        // slows every size alike rather than one of them.
        let conversations: Vec<Conversation> = sizes
            .iter()
            .map(|&turns| first_turns(&whole, turns))
            .collect();
        let mut memorizations = vec![Vec::new(); sizes.len()];
        let mut latencies = vec![Vec::new(); sizes.len()];
        for _ in 0..repeats {
            for (i, conversation) in conversations.iter().enumerate() {
                let mut round = Vec::new();
                while round.len() < ROUND_RUNS_MAX && round.iter().sum::<Duration>() < ROUND_TIME {
                    let (memorized, retrievals) = bench.once(spec, conversation);
                    round.push(memorized);
                    latencies[i].extend(retrievals);
                }
                memorizations[i].push(p50(round));
            }
        }
        let first_row = rows.len();
        for ((conversation, memorized), retrievals) in
            conversations.iter().zip(&memorizations).zip(latencies)
        {
            let count = conversation.turn_count();
            let memorize = p50(memorized.clone());
            let row = Row {
                system: spec.name,
                turns: count,
                memorize,
                fastest: memorized.iter().copied().min().unwrap_or_default(),
                slowest: memorized.iter().copied().max().unwrap_or_default(),
                per_thousand_s: memorize.as_secs_f64() * 1000.0 / count as f64,
                retrieval_p50: p50(retrievals),
            };
            println!(
                "| {} | {count} | {:.2} s | {:.2} – {:.2} s | {:.3} s | {:.2} ms |",
                row.system,
                row.memorize.as_secs_f64(),
                row.fastest.as_secs_f64(),
                row.slowest.as_secs_f64(),
                row.per_thousand_s,
                row.retrieval_p50.as_secs_f64() * 1000.0
            );
            rows.push(row);
        }
        if let (Some(first), Some(last)) = (rows.get(first_row), rows.last()) {
            // Each round's own ratio, largest size over smallest, then their median: the two
            // sizes of a round ran a few seconds apart, on the same machine state.
            let scale = first.turns as f64 / last.turns as f64;
            let mut paired: Vec<f64> = memorizations[0]
                .iter()
                .zip(&memorizations[sizes.len() - 1])
                .map(|(small, large)| large.as_secs_f64() / small.as_secs_f64() * scale)
                .collect();
            paired.sort_by(f64::total_cmp);
            println!(
                "| {} | growth of the per-turn cost, largest / smallest | | | {:.2}x (rounds: {:.2} – {:.2}x) | |",
                spec.name,
                paired[paired.len() / 2],
                paired[0],
                paired[paired.len() - 1]
            );
        }
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/cost_growth");
    std::fs::create_dir_all(&out).expect("output directory");
    let mut csv = String::from(
        "system,turns,memorize_s,fastest_s,slowest_s,per_1000_turns_s,retrieval_p50_ms\n",
    );
    for row in &rows {
        csv.push_str(&format!(
            "{},{},{:.4},{:.4},{:.4},{:.4},{:.3}\n",
            row.system,
            row.turns,
            row.memorize.as_secs_f64(),
            row.fastest.as_secs_f64(),
            row.slowest.as_secs_f64(),
            row.per_thousand_s,
            row.retrieval_p50.as_secs_f64() * 1000.0
        ));
    }
    std::fs::write(out.join("cost_growth.csv"), csv).expect("csv written");
    plot(&rows, &out.join("cost_growth.svg")).expect("plot drawn");
    println!("\nwrote {}/cost_growth.{{csv,svg}}", out.display());
}

/// Two panels side by side: each system's memorization cost per 1 000 turns relative to its
/// cost at the smallest size (linear cost is a flat line at 1), and its retrieval p50.
fn plot(rows: &[Row], path: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut systems: Vec<&str> = rows.iter().map(|r| r.system).collect();
    systems.dedup();
    // Each system's points, a value per row given the system's rows (smallest size first).
    let lines = |value: &dyn Fn(&[&Row], &Row) -> f64| -> Vec<(&str, Vec<(f64, f64)>)> {
        systems
            .iter()
            .map(|&system| {
                let mine: Vec<&Row> = rows.iter().filter(|r| r.system == system).collect();
                let points = mine
                    .iter()
                    .map(|r| (r.turns as f64, value(&mine, r)))
                    .collect();
                (system, points)
            })
            .collect()
    };
    let relative = lines(&|mine, r| r.per_thousand_s / mine[0].per_thousand_s.max(1e-9));
    let latency = lines(&|_, r| r.retrieval_p50.as_secs_f64() * 1000.0);
    let x_top = rows.iter().map(|r| r.turns).max().unwrap_or(1) as f64 * 1.05;
    let root = SVGBackend::new(path, (1100, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(550);
    let panels = [
        (
            left,
            "memorization cost per turn, relative to 1 000 turns",
            "x the per-turn cost at the smallest size",
            relative,
        ),
        (right, "retrieval latency (p50)", "ms", latency),
    ];
    for (area, caption, y_desc, lines) in panels {
        let y_top = lines
            .iter()
            .flat_map(|(_, points)| points.iter().map(|(_, y)| *y))
            .fold(0.0f64, f64::max)
            .max(1e-6)
            * 1.15;
        let mut chart = ChartBuilder::on(&area)
            .caption(caption, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0.0..x_top, 0.0..y_top)?;
        chart
            .configure_mesh()
            .x_desc("turns memorized")
            .y_desc(y_desc)
            .draw()?;
        for (i, (system, points)) in lines.into_iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?
                .label(system)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 3, colour.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
