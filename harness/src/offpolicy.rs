//! `off-policy`: upstream's off-policy regime, timed.
//!
//! The memory learns from every training dialog of the set (shuffled with Python's
//! `random.seed(42); random.shuffle`), once: the memory lives in the engine store and later
//! runs reuse it (upstream's memory cache). Each dataset's test rows are then answered; a
//! corpus dataset (LoCoMo, DialSim) first adds its conversation to the memory and removes it
//! afterwards, so every corpus meets the dialog memory alone, as upstream's per-dataset copies
//! do. Predictions are appended to `predict.partial.jsonl` as they finish, so `--resume` after
//! an interruption continues where the run stopped. Then the predictions are evaluated and
//! summarised, and the time of each case is recorded: memory processing (the set's dialog
//! memorisation and the dataset's corpus ingestion, amortised over test cases, as in the paper)
//! against prediction (memory retrieval and the answer model).

use std::collections::{BTreeMap, HashSet};
use std::fs::OpenOptions;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use futures::stream::{self, StreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use mb_baselines::{registry, CorpusMemory, MemoryError, MemorySystem, SystemSpec, TrainingDialog};
use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::evaluate::Prediction;
use mb_datasets::results::{read_json, utc_timestamp, write_json, RunFiles};
use mb_datasets::{load, Dataset, PyRandom};
use mb_engine::{Engine, NamespaceOptions};
use mb_llm::ops::Lang;
use mb_llm::{LlmArgs, LlmStack};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::data::DataArgs;
use crate::evaluation::{evaluate_run, summarize};
use crate::runtime::{self, HarnessError, Store};

/// Arguments of `off-policy`.
#[derive(Args, Debug)]
pub struct OffPolicyArgs {
    /// `single`, `domain` or `task`.
    #[arg(long, default_value = "domain")]
    dataset_type: String,
    /// The dataset, domain or task (see `mb-harness list`).
    #[arg(long, default_value = "Sample")]
    set_name: String,
    /// Memory system, or `all` for every default system upstream runs on this set.
    #[arg(long, default_value = "bm25_message")]
    baseline: String,
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    llm: LlmArgs,
    /// Engine directory: memories, the embedding cache and recorded model answers; reused by
    /// later runs.
    #[arg(long, default_value = "runs/store")]
    store: PathBuf,
    /// Where result directories are created.
    #[arg(long, default_value = "runs")]
    output_dir: PathBuf,
    /// Questions answered at once.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Memories retrieved per question (default: the system's configuration).
    #[arg(long)]
    retrieve_k: Option<usize>,
    /// Continue the run in this result directory instead of starting a new one.
    #[arg(long)]
    resume: Option<PathBuf>,
}

/// How long memorising the set's dialogs took, kept with the memory.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct MemoryBuilt {
    seconds: f64,
    dialogs: usize,
    skipped: usize,
    /// LLM operations the memorisation ran.
    #[serde(default)]
    llm_operations: u64,
}

/// What ingesting one dataset's corpus cost.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct CorpusCost {
    seconds: f64,
    llm_operations: u64,
}

/// One finished case as appended to the partial file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Finished {
    prediction: Prediction,
    timing: CaseTiming,
}

/// Where one test case's time went, in seconds, and how many LLM operations it took.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CaseTiming {
    /// The set's dialog memorisation, divided by the set's test cases.
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

const HARNESS_NAMESPACE: &str = "harness";
const PARTIAL: &str = "predict.partial.jsonl";
const CORPUS_TIMING: &str = "corpus_timing.json";
const TIMING: &str = "timing.json";

/// Runs `off-policy`.
pub fn run(args: &OffPolicyArgs) -> Result<(), HarnessError> {
    let kind: DatasetType = args.dataset_type.parse()?;
    let catalog = Catalog::builtin()?;
    let source = args.data.source()?;
    let datasets = load(source.as_ref(), &catalog, kind, &args.set_name)?;
    let specs: Vec<&'static SystemSpec> = if args.baseline == "all" {
        registry::default_systems()
            .filter(|s| !s.skips(kind, &args.set_name))
            .collect()
    } else {
        vec![registry::get(&args.baseline)?]
    };
    if args.resume.is_some() && specs.len() != 1 {
        return Err(HarnessError::Usage(
            "--resume continues one run: name its --baseline".into(),
        ));
    }
    let store = Store::open(Some(&args.store))?;
    let settings = args.llm.settings()?;
    let llm = Arc::new(LlmStack::build(
        &settings,
        args.llm.cache_mode(),
        Some(store.engine.clone()),
    )?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| HarnessError::Usage(format!("cannot start the async runtime: {e}")))?;
    let mut rows = Vec::new();
    for spec in specs {
        let outcome =
            runtime.block_on(run_system(args, kind, spec, &datasets, &store.engine, &llm))?;
        rows.push(outcome);
    }
    print_table(&rows);
    Ok(())
}

/// What one system's run produced, for the closing table.
struct Outcome {
    system: &'static str,
    dir: PathBuf,
    cases: usize,
    timing: CaseTiming,
    score: Option<f64>,
}

async fn run_system(
    args: &OffPolicyArgs,
    kind: DatasetType,
    spec: &'static SystemSpec,
    datasets: &[Dataset],
    engine: &Arc<Engine>,
    llm: &Arc<LlmStack>,
) -> Result<Outcome, HarnessError> {
    let dir = match &args.resume {
        Some(dir) => dir.clone(),
        None => args
            .output_dir
            .join("off-policy/results")
            .join(kind.as_str())
            .join(&args.set_name)
            .join(spec.name)
            .join(format!("start_at_{}", utc_timestamp())),
    };
    let files = RunFiles::new(&dir);
    if args.resume.is_none() {
        files.write(mb_datasets::results::RUN_CONFIG, &run_config(args, spec))?;
    } else if !files.path(mb_datasets::results::RUN_CONFIG).exists() {
        return Err(HarnessError::Usage(format!(
            "--resume {}: not a run directory",
            dir.display()
        )));
    }
    let lang = if datasets
        .iter()
        .any(|d| d.config.lang == mb_datasets::catalog::DatasetLang::Zh)
    {
        Lang::Zh
    } else {
        Lang::En
    };
    let namespace = format!(
        "off-policy/{}/{}/{}",
        kind.as_str(),
        args.set_name,
        spec.name
    );
    engine.ensure_namespace(HARNESS_NAMESPACE, NamespaceOptions::default())?;
    let built_key = format!("memory:{namespace}");
    let built: Option<MemoryBuilt> = engine.get_state(HARNESS_NAMESPACE, &built_key)?;
    if built.is_none() && engine.namespace(&namespace).is_ok() {
        // An interrupted memorisation: start the memory again, as upstream does.
        engine.drop_namespace(&namespace)?;
    }
    let context =
        runtime::memory_context(spec, engine.clone(), namespace.clone(), llm.clone(), lang)?;
    let k = args.retrieve_k.unwrap_or(context.settings.retrieve_k);
    let system = spec.build(context)?;
    let corpus_key = format!("corpus:{namespace}");
    if let Some(left) = engine.get_state::<CorpusMemory>(HARNESS_NAMESPACE, &corpus_key)? {
        system.delete_corpus(&left)?;
        engine.delete_state(HARNESS_NAMESPACE, &corpus_key)?;
    }
    let built = match built {
        Some(built) => built,
        None => {
            let built = memorize_dialogs(system.as_ref(), spec, datasets).await?;
            engine.put_state(HARNESS_NAMESPACE, &built_key, &built)?;
            built
        }
    };

    let partial = dir.join(PARTIAL);
    let mut finished = read_partial(&partial)?;
    let done: HashSet<(String, u64)> = finished
        .iter()
        .map(|f| (f.prediction.dataset.clone(), f.prediction.test_idx))
        .collect();
    let mut corpus_costs: BTreeMap<String, CorpusCost> = if dir.join(CORPUS_TIMING).exists() {
        read_json(&dir.join(CORPUS_TIMING))?
    } else {
        BTreeMap::new()
    };
    let test_cases: usize = datasets.iter().map(|d| d.test.len()).sum();
    let per_case_memory = built.seconds / test_cases.max(1) as f64;
    let per_case_memory_calls = built.llm_operations as f64 / test_cases.max(1) as f64;
    for dataset in datasets {
        let todo: Vec<_> = dataset
            .test
            .iter()
            .filter(|row| !done.contains(&(dataset.name().to_string(), row.test_idx)))
            .collect();
        if todo.is_empty() {
            continue;
        }
        let corpus = match (&dataset.corpus, dataset.corpus_format()) {
            (Some(conversation), Some(format)) => {
                let started = Instant::now();
                let operations = system.stats()?.llm_operations;
                let memory = system.memorize_corpus(conversation, format).await?;
                engine.put_state(HARNESS_NAMESPACE, &corpus_key, &memory)?;
                let cost = corpus_costs.entry(dataset.name().to_string()).or_default();
                cost.seconds += started.elapsed().as_secs_f64();
                cost.llm_operations += system.stats()?.llm_operations.saturating_sub(operations);
                write_json(&dir.join(CORPUS_TIMING), &corpus_costs)?;
                Some(memory)
            }
            _ => None,
        };
        let cost = corpus_costs
            .get(dataset.name())
            .copied()
            .unwrap_or_default();
        let cases = dataset.test.len().max(1) as f64;
        let (per_case_corpus, per_case_corpus_calls) =
            (cost.seconds / cases, cost.llm_operations as f64 / cases);
        let operations_before = system.stats()?.llm_operations;
        let first_new = finished.len();
        let bar = progress(
            todo.len() as u64,
            &format!("{} {}", spec.name, dataset.name()),
        );
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&partial)
            .map_err(|e| file_error(&partial, e))?;
        let system_ref = system.as_ref();
        let mut answers = stream::iter(todo.into_iter().map(|row| async move {
            let answered = system_ref
                .answer(&row.input.initial_messages(), row.lang, k)
                .await?;
            Ok::<_, MemoryError>((row.test_idx, answered))
        }))
        .buffered(args.threads.max(1));
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
                    memory_dialogs: per_case_memory,
                    memory_corpus: per_case_corpus,
                    predict_memory: answered.timing.memory_seconds,
                    predict_llm: answered.timing.llm_seconds,
                    llm_calls_memory: per_case_memory_calls + per_case_corpus_calls,
                    llm_calls_predict: 1.0,
                },
            };
            let line =
                serde_json::to_string(&entry).map_err(|e| HarnessError::Usage(e.to_string()))?;
            writeln!(file, "{line}").map_err(|e| file_error(&partial, e))?;
            finished.push(entry);
            bar.inc(1);
        }
        bar.finish_and_clear();
        file.sync_data().map_err(|e| file_error(&partial, e))?;
        // The memory's own operations while answering (answers run concurrently, so they are
        // shared out evenly), on top of the answer itself.
        let answered = (finished.len() - first_new).max(1) as f64;
        let memory_calls = system
            .stats()?
            .llm_operations
            .saturating_sub(operations_before) as f64
            / answered;
        for entry in &mut finished[first_new..] {
            entry.timing.llm_calls_predict += memory_calls;
        }
        if let Some(memory) = corpus {
            system.delete_corpus(&memory)?;
            engine.delete_state(HARNESS_NAMESPACE, &corpus_key)?;
        }
    }
    finish(args, kind, spec, datasets, llm, &files, finished).await
}

/// Memorises every training dialog of the set, shuffled as upstream shuffles them.
async fn memorize_dialogs(
    system: &dyn MemorySystem,
    spec: &SystemSpec,
    datasets: &[Dataset],
) -> Result<MemoryBuilt, HarnessError> {
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
    let started = Instant::now();
    let bar = progress(
        dialogs.len() as u64,
        &format!("{} memorising dialogs", spec.name),
    );
    let mut skipped = 0;
    for (row, dataset, dialog) in &dialogs {
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
        llm_operations: system.stats()?.llm_operations,
    })
}

/// Writes predictions and timing, evaluates and summarises.
async fn finish(
    args: &OffPolicyArgs,
    kind: DatasetType,
    spec: &'static SystemSpec,
    datasets: &[Dataset],
    llm: &LlmStack,
    files: &RunFiles,
    finished: Vec<Finished>,
) -> Result<Outcome, HarnessError> {
    let mut by_key: BTreeMap<(usize, u64), Finished> = BTreeMap::new();
    for entry in finished {
        let Some(order) = datasets
            .iter()
            .position(|d| d.name() == entry.prediction.dataset)
        else {
            continue;
        };
        by_key
            .entry((order, entry.prediction.test_idx))
            .or_insert(entry);
    }
    let predictions: Vec<Prediction> = by_key.values().map(|f| f.prediction.clone()).collect();
    files.write_predictions(&predictions)?;
    let timing: Vec<Value> = by_key
        .values()
        .map(|f| json!({"test_idx": f.prediction.test_idx, "dataset": f.prediction.dataset, "seconds": f.timing}))
        .collect();
    files.write(TIMING, &timing)?;
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

    let details = evaluate_run(files, datasets, &predictions, &llm.judge).await?;
    let timing_summary = json!({
        "mean_seconds_per_case": timing,
        "memory_processing_seconds_per_case": timing.memory_dialogs + timing.memory_corpus,
        "prediction_seconds_per_case": timing.predict_memory + timing.predict_llm,
        "llm_calls_per_case": timing.llm_calls_memory + timing.llm_calls_predict,
        "cases": by_key.len(),
    });
    let summary = summarize(
        files,
        kind,
        &args.set_name,
        datasets,
        &details,
        Some(timing_summary),
    )?;
    let configs: Vec<_> = datasets.iter().map(|d| d.config.clone()).collect();
    let score = if kind == DatasetType::Single {
        configs[0]
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

fn print_table(rows: &[Outcome]) {
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
fn read_partial(path: &Path) -> Result<Vec<Finished>, HarnessError> {
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

fn run_config(args: &OffPolicyArgs, spec: &SystemSpec) -> Value {
    json!({
        "dataset_type": args.dataset_type,
        "set_name": args.set_name,
        "memory_system": spec.name,
        "memory_system_config": spec.config_path(&runtime::configs_dir()).display().to_string(),
        "data": args.data.data,
        "llm": args.llm.llm,
        "store": args.store,
        "output_dir": args.output_dir,
        "threads": args.threads,
        "retrieve_k": args.retrieve_k,
    })
}

fn progress(length: u64, message: &str) -> ProgressBar {
    let bar = ProgressBar::new(length);
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed} (eta {eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_string());
    bar
}

fn file_error(path: &Path, error: std::io::Error) -> HarnessError {
    HarnessError::File {
        path: path.display().to_string(),
        detail: error.to_string(),
    }
}
