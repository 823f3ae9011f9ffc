//! `retrieve`: how well a memory system finds the evidence of a question, without an LLM.
//!
//! On LoCoMo ([`locomo`]) each conversation is memorized into its own namespace and every
//! question of categories 1–4 is scored against its evidence turns: unit recall and NDCG,
//! turn-level recall (`T@k`), recall within a token budget (`B@n`) and MRR, per category. On
//! LongMemEval ([`longmemeval`]) each question's haystack is memorized and scored with the
//! official metrics at turn and session level, per question type. Ingestion time (embedding
//! and engine apart), per-query latency and items stored are reported beside.

mod locomo;
mod longmemeval;
mod report;
mod score;
mod timing;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use mb_baselines::{CorpusMemory, MemorySystem, Overrides, Retrieved, SystemSettings, SystemSpec};
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_embed::Embedder;
use mb_llm::LlmStack;
use serde_json::{json, Value};

use crate::commands::longmemeval::HistoryArg;
use crate::embedders::{EmbedderArgs, Embedders};
use crate::error::HarnessError;
use crate::llm_args::offline_llm;
use crate::store::{drop_namespace_if_present, memory_context, Store};
use report::Ingestion;
use score::Cutoffs;
use timing::TimedEmbedder;

/// Arguments of `retrieve`.
#[derive(Args, Debug)]
pub struct RetrieveArgs {
    /// Memory system (see `mb-harness list`).
    #[arg(long, default_value = "bm25_message")]
    pub(crate) baseline: String,
    /// LoCoMo file (`locomo10.json` format); default: the built-in sample conversation.
    #[arg(long, conflicts_with = "longmemeval")]
    pub(crate) locomo: Option<PathBuf>,
    /// A LongMemEval file (`longmemeval_s_cleaned.json`, `longmemeval_m_cleaned.json`,
    /// `longmemeval_oracle.json`, …): each question's haystack is memorized and scored with the
    /// official retrieval metrics, one question at a time.
    #[arg(long)]
    pub(crate) longmemeval: Option<PathBuf>,
    /// LongMemEval: which turns the memory is given, `user` (the official default) or `all`.
    #[arg(long, value_enum, default_value_t = HistoryArg::User)]
    pub(crate) history: HistoryArg,
    /// LongMemEval: score only the first N scored questions.
    #[arg(long)]
    pub(crate) limit: Option<usize>,
    /// Cut-offs to report, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "5,10")]
    pub(crate) k: Vec<usize>,
    /// Context budgets (tokens of retrieved text) to report recall within, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "500,1000")]
    pub(crate) budget: Vec<usize>,
    #[command(flatten)]
    pub(crate) embedder: EmbedderArgs,
    /// Engine directory (default: a temporary one, removed afterwards).
    #[arg(long)]
    pub(crate) store: Option<PathBuf>,
    /// Where to write the JSON report (default: print only the table).
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Memory-system settings replacing the shipped ones for this run: a TOML file for the
    /// chosen system (e.g. `query_syntax = "plain"` for BM25), or a directory of files named
    /// like `configs/memory/*.toml` (missing ones shipped), e.g. `configs/memory/paper`.
    #[arg(long, value_name = "FILE|DIR")]
    pub(crate) memory_config: Option<PathBuf>,
    /// The date (`YYYY-MM-DD`) Mem0's prompt gives as today's (default: today, UTC).
    #[arg(long, default_value_t = mb_core::clock::utc_date())]
    pub(crate) date: String,
}

/// The timer of a memory's embedder (`None` for systems that do not embed).
type Timer = Option<Arc<TimedEmbedder>>;

/// What every retrieval run shares: the system, its settings, the engine, the offline LLM
/// roles, the embedder and an async runtime.
pub(crate) struct RetrieveSetup {
    pub spec: &'static SystemSpec,
    pub settings: SystemSettings,
    pub llm: Arc<LlmStack>,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub runtime: tokio::runtime::Runtime,
    pub cutoffs: Cutoffs,
    /// Last, so that every other holder of the engine (embedder caches) lets go before the
    /// store closes it and removes a temporary directory.
    pub store: Store,
}

impl RetrieveSetup {
    fn new(args: &RetrieveArgs) -> Result<RetrieveSetup, HarnessError> {
        let spec = mb_baselines::registry::get(&args.baseline)?;
        if spec.memoryless {
            return Err(HarnessError::Usage(format!(
                "--baseline {}: {} has no memory to retrieve from; pick a memory system",
                spec.name, spec.paper_name
            )));
        }
        args.embedder.warn_if_unused(&[spec]);
        let store = Store::open(args.store.as_deref())?;
        let overrides = Overrides {
            retrieve_k: None,
            embedder: args.embedder.embedder.clone(),
        };
        let settings = spec.run_settings(args.memory_config.as_deref(), &overrides)?;
        let embedder = Embedders::new(store.engine.clone()).for_system(spec, &settings)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| HarnessError::Usage(format!("cannot start the async runtime: {e}")))?;
        let clean = |values: &[usize]| {
            let mut v: Vec<usize> = values.iter().copied().filter(|&k| k > 0).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        Ok(RetrieveSetup {
            spec,
            settings,
            store,
            llm: offline_llm()?,
            embedder,
            runtime,
            cutoffs: Cutoffs {
                ks: clean(&args.k),
                budgets: clean(&args.budget),
            },
        })
    }

    /// A fresh memory of the system in `namespace` (emptied first), dated `date`, holding
    /// `conversation`; what memorizing took (wall time, of which embedding, items, turns) is
    /// added to `ingestion`.
    fn memorize(
        &self,
        namespace: String,
        date: &str,
        conversation: &Conversation,
        ingestion: &mut Ingestion,
    ) -> Result<(Box<dyn MemorySystem>, CorpusMemory), HarnessError> {
        let (system, timer) = self.memory(namespace, date)?;
        let started = Instant::now();
        let memory = self
            .runtime
            .block_on(system.memorize_corpus(conversation, CorpusFormat::Locomo))?;
        ingestion.total += started.elapsed();
        ingestion.embedding += timer.as_ref().map_or(Duration::ZERO, |t| t.take());
        ingestion.items += system.stats()?.items;
        ingestion.turns += conversation.turn_count();
        ingestion.corpora += 1;
        Ok((system, memory))
    }

    /// The `depth` best units `system` retrieves for `question`, and how long it took.
    fn retrieve(
        &self,
        system: &dyn MemorySystem,
        question: &str,
        depth: usize,
    ) -> Result<(Vec<Retrieved>, Duration), HarnessError> {
        let started = Instant::now();
        let retrieved = self
            .runtime
            .block_on(system.retrieve(question, Lang::En, depth))?;
        Ok((retrieved, started.elapsed()))
    }

    /// A fresh memory of the system in `namespace` (emptied first), dated `date`, with its
    /// embedder timed.
    fn memory(
        &self,
        namespace: String,
        date: &str,
    ) -> Result<(Box<dyn MemorySystem>, Timer), HarnessError> {
        let engine = &self.store.engine;
        drop_namespace_if_present(engine, &namespace)?;
        let mut context = memory_context(
            self.settings.clone(),
            engine.clone(),
            namespace,
            self.llm.clone(),
            self.embedder.clone(),
            Lang::En,
            date,
        )?;
        let timer = context
            .embedder
            .take()
            .map(|inner| Arc::new(TimedEmbedder::new(inner)));
        context.embedder = timer.clone().map(|t| t as Arc<dyn Embedder>);
        Ok((self.spec.build(context)?, timer))
    }

    /// Adds what every report records (embedder, settings and their origin), prints the table
    /// and writes the JSON where asked.
    fn finish(
        &self,
        args: &RetrieveArgs,
        mut report: Value,
        table: impl FnOnce(&mut dyn std::io::Write, &Value) -> std::io::Result<()>,
    ) -> Result<(), HarnessError> {
        if self.spec.needs_embedder {
            report["embedder"] = json!(self.settings.embedder());
        }
        report["settings_origin"] = json!(self.spec.settings_origin(args.memory_config.as_deref()));
        report["settings"] = serde_json::to_value(&self.settings).unwrap_or_default();
        table(&mut std::io::stdout().lock(), &report).map_err(HarnessError::Output)?;
        if let Some(path) = &args.json {
            let text = serde_json::to_string_pretty(&report).unwrap_or_default();
            mb_core::atomic_file::write_atomic(path, text.as_bytes()).map_err(|e| {
                HarnessError::File {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                }
            })?;
        }
        Ok(())
    }
}

/// Runs `retrieve`.
pub fn run(args: &RetrieveArgs) -> Result<(), HarnessError> {
    let setup = RetrieveSetup::new(args)?;
    match &args.longmemeval {
        Some(path) => longmemeval::run(args, &setup, path),
        None => locomo::run(args, &setup),
    }
}
