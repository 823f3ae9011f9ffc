//! `retrieve`: how well a memory system finds the evidence of LoCoMo questions, without an LLM.
//!
//! Each conversation is memorized into its own namespace by the chosen system; every question
//! of categories 1–4 (category 5 is adversarial, its evidence is a trap) is asked with its plain
//! question text, and the retrieved units are scored against the units holding the evidence
//! turns: Recall@k, NDCG@k and MRR, overall and per category. Message-level systems retrieve
//! turns, so a unit is relevant when it is an evidence turn; session-level systems retrieve
//! sessions, relevant when they contain an evidence turn. Ingestion time (split into embedding
//! and engine time), per-query latency and items stored are reported beside.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use mb_baselines::registry;
use mb_core::Lang;
use mb_datasets::corpus::locomo_conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_datasets::metrics::retrieval::{ndcg_at_k, recall_at_k, reciprocal_rank};
use mb_datasets::sample::SAMPLE_LOCOMO_JSON;
use mb_embed::Embedder;

use serde_json::{json, Value};

use crate::runtime::{self, HarnessError};

/// Arguments of `retrieve`.
#[derive(Args, Debug)]
pub struct RetrieveArgs {
    /// Memory system (see `mb-harness list`).
    #[arg(long, default_value = "bm25_message")]
    baseline: String,
    /// LoCoMo file (`locomo10.json` format); default: the built-in sample conversation.
    #[arg(long)]
    locomo: Option<PathBuf>,
    /// Cut-offs to report, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "5,10")]
    k: Vec<usize>,
    #[command(flatten)]
    embedder: runtime::EmbedderArgs,
    /// Engine directory (default: a temporary one, removed afterwards).
    #[arg(long)]
    store: Option<PathBuf>,
    /// Where to write the JSON report (default: print only the table).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Memory-system settings replacing the shipped ones for this run: a TOML file for the
    /// chosen system (e.g. `query_syntax = "plain"` for BM25), or a directory of files named
    /// like `configs/memory/*.toml` (missing ones shipped), e.g. `configs/memory/paper`.
    #[arg(long, value_name = "FILE|DIR")]
    memory_config: Option<PathBuf>,
    /// The date (`YYYY-MM-DD`) Mem0's prompt gives as today's (default: today, UTC).
    #[arg(long, default_value_t = mb_core::clock::utc_date())]
    date: String,
}

/// One scored question.
struct Scored {
    category: u64,
    recall: Vec<f64>,
    ndcg: Vec<f64>,
    mrr: f64,
    latency: Duration,
}

/// Runs `retrieve`.
pub fn run(args: &RetrieveArgs) -> Result<(), HarnessError> {
    let spec = registry::get(&args.baseline)?;
    if spec.memoryless {
        return Err(HarnessError::Usage(format!(
            "--baseline {}: {} has no memory to retrieve from; pick a memory system",
            spec.name, spec.paper_name
        )));
    }
    let text = match &args.locomo {
        Some(path) => std::fs::read_to_string(path).map_err(|e| HarnessError::File {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?,
        None => SAMPLE_LOCOMO_JSON.to_string(),
    };
    let origin = args
        .locomo
        .as_ref()
        .map_or("built-in sample".to_string(), |p| p.display().to_string());
    let samples: Vec<Value> = serde_json::from_str(&text).map_err(|e| HarnessError::File {
        path: origin.clone(),
        detail: format!("not a LoCoMo JSON array: {e}"),
    })?;
    let mut ks = args.k.clone();
    ks.retain(|&k| k > 0);
    ks.sort_unstable();
    ks.dedup();
    let max_k = ks.last().copied().unwrap_or(10);

    let store = runtime::Store::open(args.store.as_deref())?;
    let engine = store.engine.clone();
    let llm = runtime::offline_llm()?;
    let settings = spec.settings(args.memory_config.as_deref())?;
    let embedders = runtime::Embedders::new(engine.clone(), &args.embedder);
    let embedder = embedders.for_system(spec, &settings)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| HarnessError::Usage(format!("cannot start the async runtime: {e}")))?;
    let mut scored = Vec::new();
    let mut ingest_total = Duration::ZERO;
    let mut ingest_embedding = Duration::ZERO;
    let mut items = 0;
    for (index, sample) in samples.iter().enumerate() {
        let conversation =
            locomo_conversation(&sample["conversation"]).map_err(|e| HarnessError::File {
                path: format!("{origin}, sample {index}"),
                detail: e.to_string(),
            })?;
        let namespace = format!("retrieve/{}/{index}", spec.name);
        if engine.namespace(&namespace).is_ok() {
            engine.drop_namespace(&namespace)?;
        }
        let mut context = runtime::memory_context(
            settings.clone(),
            engine.clone(),
            namespace,
            llm.clone(),
            embedder.clone(),
            Lang::En,
            &args.date,
        )?;
        let timer = context
            .embedder
            .take()
            .map(|inner| Arc::new(TimedEmbedder::new(inner)));
        context.embedder = timer.clone().map(|t| t as Arc<dyn Embedder>);
        let system = spec.build(context)?;

        let started = Instant::now();
        let memory =
            runtime.block_on(system.memorize_corpus(&conversation, CorpusFormat::Locomo))?;
        ingest_total += started.elapsed();
        ingest_embedding += timer.as_ref().map_or(Duration::ZERO, |t| t.take());
        items += system.stats()?.items;

        // A unit is relevant to a question when it covers one of its evidence turns.
        let questions = sample["qa"].as_array().cloned().unwrap_or_default();
        for qa in &questions {
            let category = qa["category"].as_u64().unwrap_or(0);
            let evidence: HashSet<&str> = qa["evidence"]
                .as_array()
                .map(|e| e.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let Some(question) = qa["question"].as_str() else {
                continue;
            };
            if category == 5 || evidence.is_empty() {
                continue;
            }
            let started = Instant::now();
            let retrieved = runtime.block_on(system.retrieve(question, Lang::En, max_k))?;
            let latency = started.elapsed();
            let ranked: Vec<&str> = retrieved.iter().map(|r| r.doc_id.as_str()).collect();
            let relevant: HashSet<&str> = memory
                .units
                .iter()
                .filter(|u| u.turns.iter().any(|t| evidence.contains(t.as_str())))
                .map(|u| u.doc_id.as_str())
                .collect();
            if relevant.is_empty() {
                continue;
            }
            scored.push(Scored {
                category,
                recall: ks
                    .iter()
                    .map(|&k| recall_at_k(&ranked, &relevant, k).unwrap_or(0.0))
                    .collect(),
                ndcg: ks
                    .iter()
                    .map(|&k| ndcg_at_k(&ranked, &relevant, k).unwrap_or(0.0))
                    .collect(),
                mrr: reciprocal_rank(&ranked, &relevant).unwrap_or(0.0),
                latency,
            });
        }
    }
    drop(engine);
    let mut report = report(
        spec,
        &ks,
        samples.len(),
        &scored,
        ingest_total,
        ingest_embedding,
        items,
    );
    if spec.needs_embedder {
        report["embedder"] = json!(embedders.choice(&settings));
    }
    report["settings_origin"] = json!(spec.settings_origin(args.memory_config.as_deref()));
    report["settings"] = serde_json::to_value(settings).unwrap_or_default();

    print_table(&mut std::io::stdout().lock(), &report, &ks).map_err(HarnessError::Output)?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        mb_datasets::durable::write_atomic(path, text.as_bytes()).map_err(|e| {
            HarnessError::File {
                path: path.display().to_string(),
                detail: e.to_string(),
            }
        })?;
    }
    Ok(())
}

/// An embedder that adds up the time spent embedding, to split ingestion time.
struct TimedEmbedder {
    inner: Arc<dyn Embedder>,
    spent: parking_lot::Mutex<Duration>,
}

impl TimedEmbedder {
    fn new(inner: Arc<dyn Embedder>) -> TimedEmbedder {
        TimedEmbedder {
            inner,
            spent: parking_lot::Mutex::new(Duration::ZERO),
        }
    }

    /// The time spent since the last call.
    fn take(&self) -> Duration {
        std::mem::take(&mut *self.spent.lock())
    }
}

impl Embedder for TimedEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> mb_embed::Result<Vec<Vec<f32>>> {
        let started = Instant::now();
        let vectors = self.inner.embed(texts);
        *self.spent.lock() += started.elapsed();
        vectors
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

fn metrics_of(scored: &[&Scored], ks: &[usize]) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("questions".into(), json!(scored.len()));
    for (i, k) in ks.iter().enumerate() {
        out.insert(
            format!("recall@{k}"),
            json!(mean(scored.iter().map(|s| s.recall[i]))),
        );
        out.insert(
            format!("ndcg@{k}"),
            json!(mean(scored.iter().map(|s| s.ndcg[i]))),
        );
    }
    out.insert("mrr".into(), json!(mean(scored.iter().map(|s| s.mrr))));
    Value::Object(out)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn report(
    spec: &mb_baselines::SystemSpec,
    ks: &[usize],
    conversations: usize,
    scored: &[Scored],
    ingest_total: Duration,
    ingest_embedding: Duration,
    items: u64,
) -> Value {
    let all: Vec<&Scored> = scored.iter().collect();
    let mut categories = BTreeMap::new();
    for s in scored {
        categories
            .entry(s.category)
            .or_insert_with(Vec::new)
            .push(s);
    }
    let per_category: serde_json::Map<String, Value> = categories
        .iter()
        .map(|(c, list)| (c.to_string(), metrics_of(list, ks)))
        .collect();
    let mut latencies: Vec<Duration> = scored.iter().map(|s| s.latency).collect();
    latencies.sort_unstable();
    json!({
        "system": spec.name,
        "paper_name": spec.paper_name,
        "relevance": "a retrieved unit is relevant when it covers an evidence turn (turn units: the turn itself; session units: a session containing it)",
        "conversations": conversations,
        "overall": metrics_of(&all, ks),
        "per_category": per_category,
        "ingestion_seconds": ingest_total.as_secs_f64(),
        "ingestion_embedding_seconds": ingest_embedding.as_secs_f64(),
        "ingestion_engine_seconds": ingest_total.saturating_sub(ingest_embedding).as_secs_f64(),
        "items_stored": items,
        "query_latency_ms": {"p50": percentile(&latencies, 0.5), "p95": percentile(&latencies, 0.95)},
    })
}

fn print_table(out: &mut impl Write, report: &Value, ks: &[usize]) -> std::io::Result<()> {
    writeln!(
        out,
        "{} ({}), {} conversation(s); {}",
        report["system"].as_str().unwrap_or_default(),
        report["paper_name"].as_str().unwrap_or_default(),
        report["conversations"].as_u64().unwrap_or(0),
        report["relevance"].as_str().unwrap_or_default()
    )?;
    let mut header = format!("{:<9}{:>6}", "category", "n");
    for k in ks {
        header.push_str(&format!(
            "{:>10}{:>10}",
            format!("R@{k}"),
            format!("NDCG@{k}")
        ));
    }
    header.push_str(&format!("{:>8}", "MRR"));
    writeln!(out, "{header}")?;
    let row = |out: &mut dyn Write, name: &str, m: &Value| -> std::io::Result<()> {
        let mut line = format!("{name:<9}{:>6}", m["questions"].as_u64().unwrap_or(0));
        for k in ks {
            let value = |key: String| m[key].as_f64().unwrap_or(0.0);
            line.push_str(&format!(
                "{:>10.3}{:>10.3}",
                value(format!("recall@{k}")),
                value(format!("ndcg@{k}"))
            ));
        }
        line.push_str(&format!("{:>8.3}", m["mrr"].as_f64().unwrap_or(0.0)));
        writeln!(out, "{line}")
    };
    if let Some(categories) = report["per_category"].as_object() {
        for (category, metrics) in categories {
            row(out, category, metrics)?;
        }
    }
    row(out, "all", &report["overall"])?;
    writeln!(
        out,
        "ingestion {:.3} s (embedding {:.3} s, engine {:.3} s), {} items stored; query latency p50 {:.2} ms, p95 {:.2} ms",
        report["ingestion_seconds"].as_f64().unwrap_or(0.0),
        report["ingestion_embedding_seconds"].as_f64().unwrap_or(0.0),
        report["ingestion_engine_seconds"].as_f64().unwrap_or(0.0),
        report["items_stored"].as_u64().unwrap_or(0),
        report["query_latency_ms"]["p50"].as_f64().unwrap_or(0.0),
        report["query_latency_ms"]["p95"].as_f64().unwrap_or(0.0),
    )?;
    Ok(())
}
