//! What every regime shares: its flags, the loaded set and model roles, the training dialogs
//! in upstream's shuffled order, answering a split with timing and progress, and writing,
//! evaluating and summarising a run directory.

use std::collections::{BTreeMap, HashSet};
use std::fs::OpenOptions;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use futures::stream::{self, StreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use mb_baselines::{registry, MemoryError, MemorySystem, SystemSpec, TrainingDialog};
use mb_datasets::catalog::{Catalog, DatasetLang, DatasetType};
use mb_datasets::evaluate::Prediction;
use mb_datasets::results::{RunFiles, RUN_CONFIG};
use mb_datasets::row::{Dialog, Row};
use mb_datasets::{load, Dataset, PyRandom};
use mb_embed::Embedder;
use mb_engine::{Engine, NamespaceOptions};
use mb_llm::ops::Lang;
use mb_llm::{LlmArgs, LlmStack};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::data::DataArgs;
use crate::evaluation::{evaluate_run, summarize};
use crate::runtime::{self, HarnessError, Store};

/// Flags every regime takes.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// `single`, `domain` or `task`.
    #[arg(long, default_value = "domain")]
    pub dataset_type: String,
    /// The dataset, domain or task (see `mb-harness list`).
    #[arg(long, default_value = "Sample")]
    pub set_name: String,
    /// Memory system, or `all` for every default system upstream runs on this set.
    #[arg(long, default_value = "bm25_message")]
    pub baseline: String,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub embedder: runtime::EmbedderArgs,
    /// Engine directory: memories, the embedding cache and recorded model answers; reused by
    /// later runs.
    #[arg(long, default_value = "runs/store")]
    pub store: PathBuf,
    /// Where result directories are created.
    #[arg(long, default_value = "runs")]
    pub output_dir: PathBuf,
    /// Questions answered at once.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Memories retrieved per question (default: the system's configuration).
    #[arg(long)]
    pub retrieve_k: Option<usize>,
    /// Run a system on a set upstream skips it for.
    #[arg(long)]
    pub force: bool,
}

/// The loaded set, the systems to run, and the engine and model roles they share.
pub struct Setup {
    /// `single`, `domain` or `task`.
    pub kind: DatasetType,
    /// The set's datasets in upstream's order.
    pub datasets: Vec<Dataset>,
    /// The memory systems to run.
    pub specs: Vec<&'static SystemSpec>,
    /// The engine store.
    pub store: Store,
    /// The model roles.
    pub llm: Arc<LlmStack>,
    /// The async runtime answers run on.
    pub runtime: tokio::runtime::Runtime,
    /// The embedder, when a system needs one.
    pub embedder: Option<Arc<dyn Embedder>>,
}

impl Setup {
    /// Loads everything `args` names; `wo_memory` is refused when `memoryless` is false
    /// (regimes whose point is a memory that changes).
    pub fn new(args: &RunArgs, memoryless: bool) -> Result<Setup, HarnessError> {
        let kind: DatasetType = args.dataset_type.parse()?;
        let specs: Vec<&'static SystemSpec> = if args.baseline == "all" {
            registry::default_systems()
                .filter(|s| !s.skips(kind, &args.set_name) && (memoryless || s.name != "wo_memory"))
                .collect()
        } else {
            let spec = registry::get(&args.baseline)?;
            if spec.skips(kind, &args.set_name) && !args.force {
                return Err(HarnessError::Usage(format!(
                    "upstream does not run {} on {} {}: {} (--force runs it anyway)",
                    spec.name,
                    kind.as_str(),
                    args.set_name,
                    spec.skip_reason
                )));
            }
            vec![spec]
        };
        let datasets = load(
            args.data.source()?.as_ref(),
            &Catalog::builtin()?,
            kind,
            &args.set_name,
        )?;
        if !memoryless && specs.iter().any(|s| s.name == "wo_memory") {
            return Err(HarnessError::Usage(
                "this regime needs a memory: wo_memory has none".into(),
            ));
        }
        let store = Store::open(Some(&args.store))?;
        let llm = Arc::new(LlmStack::build(
            &args.llm.settings()?,
            args.llm.cache_mode(),
            Some(store.engine.clone()),
        )?);
        let embedder = if specs.iter().any(|s| s.needs_embedder) {
            Some(args.embedder.open(&store.engine)?)
        } else {
            None
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads.max(1))
            .enable_all()
            .build()
            .map_err(|e| HarnessError::Usage(format!("cannot start the async runtime: {e}")))?;
        if args.llm.cache_mode() != mb_llm::CacheMode::Replay {
            runtime.block_on(preflight(&llm))?;
        }
        Ok(Setup {
            kind,
            datasets,
            specs,
            store,
            llm,
            runtime,
            embedder,
        })
    }

    /// The language a memory serving the set indexes for: Chinese when any dataset is.
    pub fn lang(&self) -> Lang {
        if self
            .datasets
            .iter()
            .any(|d| d.config.lang == DatasetLang::Zh)
        {
            Lang::Zh
        } else {
            Lang::En
        }
    }

    /// Opens `spec`'s memory in `namespace`.
    pub fn system(
        &self,
        spec: &'static SystemSpec,
        namespace: &str,
    ) -> Result<Box<dyn MemorySystem>, HarnessError> {
        let embedder = if spec.needs_embedder {
            self.embedder.clone()
        } else {
            None
        };
        let context = runtime::memory_context(
            spec,
            self.store.engine.clone(),
            namespace.to_string(),
            self.llm.clone(),
            embedder,
            self.lang(),
        )?;
        Ok(spec.build(context)?)
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.store.engine
    }
}

/// Asks every model-backed role for a one-word reply, so an unreachable or misconfigured
/// endpoint stops the run before any work (not after an hour of memorisation).
async fn preflight(llm: &LlmStack) -> Result<(), HarnessError> {
    let roles = [
        ("answer", &llm.answer),
        ("memory", &llm.memory),
        ("simulator", &llm.simulator),
        ("judge", &llm.judge),
    ];
    for (role, backend) in roles {
        if backend.is_offline() {
            continue;
        }
        let ping = mb_llm::ops::Answer::new(vec![mb_llm::Message::user("Reply with the word OK.")]);
        backend
            .run(&ping, Lang::En)
            .await
            .map_err(|e| HarnessError::Usage(format!("the {role} model is not usable: {e}")))?;
    }
    // The check is not part of any case's cost.
    llm.ledger.take();
    Ok(())
}

/// A new run directory: `<output>/<regime>/<type>/<set>/<system>/start_at_<stamp>/` with its
/// `run_config.json`.
pub fn new_run_dir(
    args: &RunArgs,
    regime: &str,
    spec: &SystemSpec,
    extra: Value,
) -> Result<RunFiles, HarnessError> {
    let dir = args
        .output_dir
        .join(regime)
        .join(&args.dataset_type)
        .join(&args.set_name)
        .join(spec.name)
        .join(format!(
            "start_at_{}",
            mb_datasets::results::utc_timestamp()
        ));
    let files = RunFiles::new(dir);
    let mut config = json!({
        "dataset_type": args.dataset_type,
        "set_name": args.set_name,
        "memory_system": spec.name,
        "memory_system_config": spec.config_path(&runtime::configs_dir()).display().to_string(),
        "data": args.data.data,
        "llm": args.llm.llm,
        "embedder": args.embedder.embedder,
        "store": args.store,
        "output_dir": args.output_dir,
        "threads": args.threads,
        "retrieve_k": args.retrieve_k,
    });
    if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
        config.extend(extra.clone());
    }
    files.write(RUN_CONFIG, &config)?;
    Ok(files)
}

/// Where one case's time went, in seconds, and how many LLM operations it took.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CaseTiming {
    /// The memorisation of training dialogs, divided by the test cases it serves.
    pub memory_dialogs: f64,
    /// The dataset's corpus ingestion, divided by its test cases.
    pub memory_corpus: f64,
    /// Retrieval and prompt assembly.
    pub predict_memory: f64,
    /// Waiting for the answer model.
    pub predict_llm: f64,
    /// LLM operations of memory processing (dialogs and corpus), amortised like its time.
    pub llm_calls_memory: f64,
    /// LLM operations of prediction: the memory's (e.g. query keywords) and the answer.
    pub llm_calls_predict: f64,
}

/// One answered case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finished {
    /// The prediction as upstream stores it.
    pub prediction: Prediction,
    /// Its cost.
    pub timing: CaseTiming,
}

/// How long memorising dialogs took.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct MemoryBuilt {
    /// Seconds.
    pub seconds: f64,
    /// Dialogs memorised.
    pub dialogs: usize,
    /// Dialogs the system could not take (counted, skipped).
    pub skipped: usize,
    /// LLM operations the memorisation ran.
    #[serde(default)]
    pub llm_operations: u64,
}

/// A training dialog of the set: its row, dataset and recorded conversation.
pub type SetDialog<'a> = (&'a Row, &'a str, &'a Dialog);

/// The set's training dialogs for `spec` (`dialog`, or `dialog_<stem>` on corpus datasets),
/// shuffled as upstream's `random.seed(42); random.shuffle(...)`. Rows without the column are
/// skipped.
pub fn training_dialogs<'a>(spec: &SystemSpec, datasets: &'a [Dataset]) -> Vec<SetDialog<'a>> {
    let mut dialogs = Vec::new();
    if spec.name != "wo_memory" {
        for dataset in datasets {
            let stem = if dataset.corpus.is_some() {
                spec.dialog_stem
            } else {
                ""
            };
            for row in &dataset.train {
                if let Some(dialog) = row.dialogs.get(stem) {
                    dialogs.push((row, dataset.name(), dialog));
                }
            }
        }
    }
    PyRandom::new(42).shuffle(&mut dialogs);
    dialogs
}

/// Memorises `dialogs` in order, skipping (and counting) those the system cannot take.
pub async fn memorize(
    system: &dyn MemorySystem,
    label: &str,
    dialogs: &[SetDialog<'_>],
) -> Result<MemoryBuilt, HarnessError> {
    let started = Instant::now();
    let bar = progress(dialogs.len() as u64, label);
    let before = system.stats()?.llm_operations;
    let mut skipped = 0;
    for (row, dataset, dialog) in dialogs {
        let training = TrainingDialog {
            test_idx: row.test_idx,
            dataset,
            lang: row.lang,
            messages: &dialog.messages,
        };
        match system.memorize_dialog(training).await {
            Ok(()) => {}
            Err(error @ MemoryError::BadDialog { .. }) => {
                tracing::warn!("{dataset}: skipped: {error}");
                skipped += 1;
            }
            Err(other) => return Err(other.into()),
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(MemoryBuilt {
        seconds: started.elapsed().as_secs_f64(),
        dialogs: dialogs.len(),
        skipped,
        llm_operations: system.stats()?.llm_operations.saturating_sub(before),
    })
}

/// Answers `rows` of `dataset` (concurrently, `threads` at a time), calling `sink` with each
/// finished case as it completes; `base` carries the case's share of memory processing. The
/// memory's own operations while answering are shared out evenly over the cases.
#[allow(clippy::too_many_arguments)]
pub async fn answer_rows(
    system: &dyn MemorySystem,
    dataset: &Dataset,
    rows: Vec<&Row>,
    k: usize,
    threads: usize,
    label: &str,
    base: CaseTiming,
    mut sink: impl FnMut(&Finished) -> Result<(), HarnessError>,
) -> Result<Vec<Finished>, HarnessError> {
    let bar = progress(rows.len() as u64, label);
    let before = system.stats()?.llm_operations;
    let mut answers = stream::iter(rows.into_iter().map(|row| async move {
        let answered = system
            .answer(&row.input.initial_messages(), row.lang, k)
            .await?;
        Ok::<_, MemoryError>((row.test_idx, answered))
    }))
    .buffered(threads.max(1));
    let mut finished = Vec::new();
    while let Some(result) = answers.next().await {
        let (test_idx, answered) = result?;
        let entry = Finished {
            prediction: Prediction {
                test_idx,
                messages: answered
                    .messages
                    .iter()
                    .filter_map(|m| serde_json::to_value(m).ok())
                    .collect(),
                response: answered.response,
                dataset: dataset.name().to_string(),
            },
            timing: CaseTiming {
                predict_memory: answered.timing.memory_seconds,
                predict_llm: answered.timing.llm_seconds,
                llm_calls_predict: 1.0,
                ..base
            },
        };
        sink(&entry)?;
        finished.push(entry);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let memory_calls =
        system.stats()?.llm_operations.saturating_sub(before) as f64 / finished.len().max(1) as f64;
    for entry in &mut finished {
        entry.timing.llm_calls_predict += memory_calls;
    }
    Ok(finished)
}

/// What one system's run produced, for the closing table.
pub struct Outcome {
    /// The memory system.
    pub system: &'static str,
    /// Its run directory.
    pub dir: PathBuf,
    /// Cases answered.
    pub cases: usize,
    /// Mean cost per case.
    pub timing: CaseTiming,
    /// Normalised average (domain/task) or the first metric's mean (single).
    pub score: Option<f64>,
}

/// Writes predictions (as `predictions_file`) and timing, evaluates and summarises the cases
/// `finished` in dataset order then `test_idx` (the first entry of a case wins).
pub async fn finish(
    setup: &Setup,
    set_name: &str,
    spec: &'static SystemSpec,
    files: &RunFiles,
    predictions_file: &str,
    finished: Vec<Finished>,
) -> Result<Outcome, HarnessError> {
    let datasets = &setup.datasets;
    let mut by_key: BTreeMap<(usize, u64), Finished> = BTreeMap::new();
    for entry in finished {
        if let Some(order) = datasets
            .iter()
            .position(|d| d.name() == entry.prediction.dataset)
        {
            by_key
                .entry((order, entry.prediction.test_idx))
                .or_insert(entry);
        }
    }
    let predictions: Vec<Prediction> = by_key.values().map(|f| f.prediction.clone()).collect();
    files.write(predictions_file, &predictions)?;
    let per_case: Vec<Value> = by_key
        .values()
        .map(|f| json!({"test_idx": f.prediction.test_idx, "dataset": f.prediction.dataset, "seconds": f.timing}))
        .collect();
    files.write(TIMING, &per_case)?;
    let mean = |pick: fn(&CaseTiming) -> f64| {
        by_key.values().map(|f| pick(&f.timing)).sum::<f64>() / by_key.len().max(1) as f64
    };
    let timing = CaseTiming {
        memory_dialogs: mean(|t| t.memory_dialogs),
        memory_corpus: mean(|t| t.memory_corpus),
        predict_memory: mean(|t| t.predict_memory),
        predict_llm: mean(|t| t.predict_llm),
        llm_calls_memory: mean(|t| t.llm_calls_memory),
        llm_calls_predict: mean(|t| t.llm_calls_predict),
    };
    let details = evaluate_run(files, datasets, &predictions, &setup.llm.judge).await?;
    let timing_summary = json!({
        "mean_seconds_per_case": timing,
        "memory_processing_seconds_per_case": timing.memory_dialogs + timing.memory_corpus,
        "prediction_seconds_per_case": timing.predict_memory + timing.predict_llm,
        "llm_calls_per_case": timing.llm_calls_memory + timing.llm_calls_predict,
        "cases": by_key.len(),
        // Model calls, tokens and latency by role and operation since the last run finished.
        "model_usage": setup.llm.ledger.take(),
    });
    let summary = summarize(
        files,
        setup.kind,
        set_name,
        datasets,
        &details,
        Some(timing_summary),
    )?;
    let score = if setup.kind == DatasetType::Single {
        datasets[0]
            .config
            .test_metrics
            .first()
            .and_then(|m| summary["summary"][m].as_f64())
    } else {
        summary["summary"]["average"].as_f64()
    };
    Ok(Outcome {
        system: spec.name,
        dir: files.dir().to_path_buf(),
        cases: by_key.len(),
        timing,
        score,
    })
}

/// The per-system table a run ends with.
pub fn print_table(rows: &[Outcome]) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{:<18}{:>7}{:>15}{:>15}{:>14}{:>12}{:>11}{:>9}",
        "baseline",
        "cases",
        "memory s/case",
        "corpus s/case",
        "retrieval ms",
        "llm s/case",
        "llm calls",
        "score"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "{:<18}{:>7}{:>15.4}{:>15.4}{:>14.3}{:>12.4}{:>11.2}{:>9}",
            row.system,
            row.cases,
            row.timing.memory_dialogs,
            row.timing.memory_corpus,
            row.timing.predict_memory * 1000.0,
            row.timing.predict_llm,
            row.timing.llm_calls_memory + row.timing.llm_calls_predict,
            row.score.map_or("-".to_string(), |s| format!("{s:.4}")),
        );
    }
    for row in rows {
        let _ = writeln!(out, "{}: {}", row.system, row.dir.display());
    }
}

/// The finished cases of an interrupted run; a line cut short by a crash is ignored.
pub fn read_partial(path: &Path) -> Result<Vec<Finished>, HarnessError> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(Vec::new());
    };
    let mut finished = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|e| file_error(path, e))?;
        if let Ok(entry) = serde_json::from_str::<Finished>(&line) {
            finished.push(entry);
        }
    }
    Ok(finished)
}

/// An append-only log of finished cases.
pub struct PartialLog {
    path: PathBuf,
    file: std::fs::File,
}

impl PartialLog {
    /// Opens (or creates) the log at `path`.
    pub fn open(path: &Path) -> Result<PartialLog, HarnessError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| file_error(path, e))?;
        Ok(PartialLog {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends one case.
    pub fn append(&mut self, entry: &Finished) -> Result<(), HarnessError> {
        let line = serde_json::to_string(entry).map_err(|e| HarnessError::Usage(e.to_string()))?;
        writeln!(self.file, "{line}").map_err(|e| file_error(&self.path, e))
    }

    /// Forces the log to disk.
    pub fn sync(&self) -> Result<(), HarnessError> {
        self.file.sync_data().map_err(|e| file_error(&self.path, e))
    }
}

/// The keys of finished cases.
pub fn done(finished: &[Finished]) -> HashSet<(String, u64)> {
    finished
        .iter()
        .map(|f| (f.prediction.dataset.clone(), f.prediction.test_idx))
        .collect()
}

/// The namespace holding the harness's own bookkeeping (memory completion markers, corpora
/// in memory).
pub const HARNESS_NAMESPACE: &str = "harness";
/// Per-case timing file of a run.
pub const TIMING: &str = "timing.json";

/// Makes sure the bookkeeping namespace exists.
pub fn ensure_bookkeeping(engine: &Engine) -> Result<(), HarnessError> {
    engine.ensure_namespace(HARNESS_NAMESPACE, NamespaceOptions::default())?;
    Ok(())
}

/// A progress bar with a label, elapsed time and ETA.
pub fn progress(length: u64, message: &str) -> ProgressBar {
    let bar = ProgressBar::new(length);
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed} (eta {eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_string());
    bar
}

/// A file error naming the path.
pub fn file_error(path: &Path, error: std::io::Error) -> HarnessError {
    HarnessError::File {
        path: path.display().to_string(),
        detail: error.to_string(),
    }
}
