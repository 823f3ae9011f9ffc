//! Answered cases: their cost, answering a split with progress, the append-only log that makes
//! runs resumable, and writing, evaluating and summarising a run's cases.

use std::collections::{BTreeMap, HashSet};
use std::fs::OpenOptions;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use futures::stream::{self, StreamExt};
use mb_baselines::{MemoryError, MemorySystem, SystemSpec};
use mb_datasets::catalog::DatasetType;
use mb_datasets::evaluate::Prediction;
use mb_datasets::results::RunFiles;
use mb_datasets::row::Row;
use mb_datasets::Dataset;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::evaluation::{evaluate_run, summarize};
use crate::run::{file_error, progress, RunArgs, Setup};
use crate::runtime::HarnessError;

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

/// Per-case timing file of a run.
pub const TIMING: &str = "timing.json";

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

/// Answers every test set with the memory as it is; writes, evaluates and summarises the
/// answers in `files` (predictions as `predictions_file`). `tag` names the step in progress.
#[allow(clippy::too_many_arguments)]
pub async fn answer_test_sets(
    setup: &Setup,
    run: &RunArgs,
    spec: &'static SystemSpec,
    system: &dyn MemorySystem,
    k: usize,
    files: &RunFiles,
    predictions_file: &str,
    base: CaseTiming,
    tag: &str,
) -> Result<Outcome, HarnessError> {
    let mut finished = Vec::new();
    for dataset in &setup.datasets {
        let label = format!("{} {} ({tag})", spec.name, dataset.name());
        let rows = dataset.test.iter().collect();
        finished.extend(
            answer_rows(system, dataset, rows, k, run.threads, &label, base, |_| {
                Ok(())
            })
            .await?,
        );
    }
    finish(
        setup,
        &run.set_name,
        spec,
        files,
        predictions_file,
        finished,
    )
    .await
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
