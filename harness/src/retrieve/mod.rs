//! `retrieve`: how well a memory system finds the evidence of LoCoMo questions, without an LLM.
//!
//! Each conversation is memorized into its own namespace by the chosen system; every question
//! of categories 1–4 (category 5 is adversarial, its evidence is a trap) is asked with its plain
//! question text, and the retrieved units are scored against the units holding the evidence
//! turns: Recall@k, NDCG@k and MRR, overall and per category. Message-level systems retrieve
//! turns, so a unit is relevant when it is an evidence turn; session-level systems retrieve
//! sessions, relevant when they contain an evidence turn. Ingestion time (split into embedding
//! and engine time), per-query latency and items stored are reported beside.

mod report;
mod score;
mod timing;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use mb_baselines::registry;
use mb_core::Lang;
use mb_datasets::corpus::locomo_conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_datasets::sample::SAMPLE_LOCOMO_JSON;
use mb_embed::Embedder;

use serde_json::{json, Value};

use crate::runtime::{self, HarnessError};
use report::{print_table, Ingestion};
use score::{score, Cutoffs, TokenCounter};
use timing::TimedEmbedder;

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
    /// Context budgets (tokens of retrieved text) to report recall within, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "500,1000")]
    budget: Vec<usize>,
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

/// How many units a question retrieves: enough for the largest cut-off and to fill the largest
/// budget with turn-sized units.
const MIN_DEPTH: usize = 50;

fn cutoffs(args: &RetrieveArgs) -> Cutoffs {
    let clean = |values: &[usize]| {
        let mut v: Vec<usize> = values.iter().copied().filter(|&k| k > 0).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    Cutoffs {
        ks: clean(&args.k),
        budgets: clean(&args.budget),
    }
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
    let cutoffs = cutoffs(args);
    let depth = cutoffs.ks.last().copied().unwrap_or(10).max(MIN_DEPTH);
    let tokens = TokenCounter::new()?;

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
    let mut ingestion = Ingestion::default();
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
        ingestion.total += started.elapsed();
        ingestion.embedding += timer.as_ref().map_or(Duration::ZERO, |t| t.take());
        ingestion.items += system.stats()?.items;
        ingestion.turns += conversation.turn_count();
        ingestion.corpora += 1;

        let corpus_turns: HashSet<&str> = memory
            .units
            .iter()
            .flat_map(|u| u.turns.iter().map(String::as_str))
            .collect();
        let questions = sample["qa"].as_array().cloned().unwrap_or_default();
        for qa in &questions {
            let category = qa["category"].as_u64().unwrap_or(0);
            let Some(question) = qa["question"].as_str() else {
                continue;
            };
            if category == 5 {
                continue;
            }
            // The question's evidence turns that the corpus holds (a few LoCoMo ids are typos).
            let evidence: HashSet<&str> = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|t| corpus_turns.contains(t))
                .collect();
            let relevant: HashSet<&str> = memory
                .units
                .iter()
                .filter(|u| u.turns.iter().any(|t| evidence.contains(t.as_str())))
                .map(|u| u.doc_id.as_str())
                .collect();
            let started = Instant::now();
            let retrieved = runtime.block_on(system.retrieve(question, Lang::En, depth))?;
            let latency = started.elapsed();
            scored.extend(score(
                category.to_string(),
                &retrieved,
                &evidence,
                &relevant,
                &cutoffs,
                &tokens,
                latency,
            ));
        }
    }
    drop(engine);
    let relevance = "a retrieved unit is relevant when it covers an evidence turn (turn units: the turn itself; session units: a session containing it)";
    let mut report = report::report(spec, &cutoffs, relevance, &scored, &ingestion);
    if spec.needs_embedder {
        report["embedder"] = json!(embedders.choice(&settings));
    }
    report["settings_origin"] = json!(spec.settings_origin(args.memory_config.as_deref()));
    report["settings"] = serde_json::to_value(settings).unwrap_or_default();

    print_table(&mut std::io::stdout().lock(), &report, &cutoffs).map_err(HarnessError::Output)?;
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
