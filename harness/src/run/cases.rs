//! Answered cases: answering a split with progress, the append-only log that makes runs
//! resumable, and writing, evaluating and summarizing a run's cases.

use std::collections::BTreeMap;
use std::path::PathBuf;

use futures::stream::{self, StreamExt};
use mb_baselines::{MemorySystem, SystemSpec};
use mb_datasets::catalog::DatasetType;
use mb_datasets::row::Row;
use mb_datasets::Dataset;
use mb_eval::{Graders, Prediction};
use mb_eval::{RunFiles, SUMMARY};
use mb_llm::{usage_of, LlmStack};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::HarnessError;
use crate::run::cost::CaseTiming;
use crate::run::evaluation::{evaluate_run, summarize};
use crate::run::fewer_memories::{answer_case, refuse_all_failed, AnswerFailures};
use crate::run::growing_memory::GrowingMemory;
use crate::run::partial_log::{LogEntry, PartialLog};
use crate::run::progress::ModelProgress;
use crate::run::{RunArgs, RunSetup};

/// One answered case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finished {
    /// The prediction as upstream stores it.
    pub prediction: Prediction,
    /// Its cost.
    pub timing: CaseTiming,
    /// Its failed attempts, and the error when it got upstream's error answer.
    #[serde(default)]
    pub failures: AnswerFailures,
    /// Its prediction's fallbacks (unusable model output replaced by upstream's fallback), by
    /// operation.
    #[serde(default)]
    pub fallbacks: BTreeMap<String, u64>,
    /// The memories retrieved for it, best first, as [`RecordedMemory`] bounds them (the whole
    /// assembled prompt is the prediction's last message); empty in logs from before they were
    /// recorded, and for systems that retrieve nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retrieved: Vec<RecordedMemory>,
}

/// A retrieved memory as a run records it: at most [`RecordedMemory::MOST`] per case, each text
/// cut to [`RecordedMemory::TEXT_CHARS`] characters, so that a large `--retrieve-k` on a large
/// corpus does not grow the resume log without bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedMemory {
    /// The memory's id in upstream's scheme.
    pub doc_id: String,
    /// The score it was ranked by.
    pub score: f32,
    /// Its text (cut, with `…`, when longer than the bound).
    pub text: String,
}

impl RecordedMemory {
    /// Most memories recorded per case.
    pub const MOST: usize = 100;
    /// Most characters of a memory's text recorded.
    pub const TEXT_CHARS: usize = 2000;

    /// The first [`Self::MOST`] of `retrieved`, their texts bounded.
    fn of(retrieved: &[mb_baselines::Retrieved]) -> Vec<RecordedMemory> {
        retrieved
            .iter()
            .take(Self::MOST)
            .map(|memory| RecordedMemory {
                doc_id: mb_core::excerpt(&memory.doc_id, Self::TEXT_CHARS).into_owned(),
                score: memory.score,
                text: mb_core::excerpt(&memory.text, Self::TEXT_CHARS).into_owned(),
            })
            .collect()
    }
}

/// Per-case timing file of a run.
pub const TIMING: &str = "timing.json";
/// A step's predictions (upstream's name in stepwise and on-policy runs).
const STEP_PREDICTIONS: &str = "test_predicts.json";
/// The append-only log of a run's finished cases.
pub const PARTIAL: &str = "predict.partial.jsonl";

/// Answers `rows` of `dataset` (concurrently, `threads` at a time), calling `sink` with each
/// finished case as it completes; `base` carries the case's share of memory processing. A
/// failed answer is tried again with fewer memories as upstream's is (see
/// [`crate::run::fewer_memories`]). LLM calls (model calls with re-asks, context fitting and
/// the memory's own, and offline operations), tokens and fallbacks are measured per case.
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
    let bar = ModelProgress::new(rows.len() as u64, label, "cases", &system.context().llm);
    let mut answers = stream::iter(rows.into_iter().map(|row| async move {
        let messages = row.input.initial_messages();
        let (answered, usage) = usage_of(answer_case(system, &messages, row.lang, k)).await;
        Ok::<_, HarnessError>((row.test_idx, answered?, usage))
    }))
    .buffered(threads.max(1));
    let mut finished = Vec::new();
    while let Some(result) = answers.next().await {
        let (test_idx, case, usage) = result?;
        let answered = case.answered;
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
                llm_calls_predict: usage.llm_calls() as f64,
                input_tokens_predict: usage.input_tokens as f64,
                output_tokens_predict: usage.output_tokens as f64,
                fallbacks_predict: usage.fallback_count() as f64,
                ..base
            },
            failures: case.failures,
            fallbacks: usage.fallbacks,
            retrieved: RecordedMemory::of(&answered.retrieved),
        };
        sink(&entry)?;
        finished.push(entry);
        bar.inc();
    }
    Ok(finished)
}

/// Answers every test set with a stepwise or on-policy run's memory as it is; writes,
/// evaluates and summarizes the answers in the step's `files` (predictions as upstream's
/// `test_predicts.json`). `tag` names the step in progress. A step that has its summary already
/// is not run again (a rebuilt memory that questions change is asked them again); one
/// interrupted part-way keeps the cases its partial log holds.
pub async fn answer_test_sets(
    setup: &RunSetup,
    run: &RunArgs,
    memory: &GrowingMemory,
    files: &RunFiles,
    base: CaseTiming,
    tag: &str,
) -> Result<Outcome, HarnessError> {
    let (system, k, spec) = (memory.system(), memory.k(), memory.spec());
    if let Some(outcome) = completed(setup, spec, files)? {
        if memory.replays_questions() {
            // A rebuilt memory is asked this step's questions again, as it was before the stop.
            for dataset in &setup.datasets {
                let label = format!("{} {} ({tag}, asked again)", spec.name, dataset.name());
                let rows = dataset.test.iter().collect();
                answer_rows(system, dataset, rows, k, run.threads, &label, base, |_| {
                    Ok(())
                })
                .await?;
            }
        }
        return Ok(outcome);
    }
    let (mut log, mut finished) = PartialLog::open(&files.path(PARTIAL))?;
    for dataset in &setup.datasets {
        let label = format!("{} {} ({tag})", spec.name, dataset.name());
        let rows = log.todo(dataset, &dataset.test);
        finished.extend(
            answer_rows(
                system,
                dataset,
                rows,
                k,
                run.threads,
                &label,
                base,
                |entry| log.append(entry),
            )
            .await?,
        );
        log.sync()?;
    }
    finish(
        setup,
        &run.set_name,
        spec,
        files,
        STEP_PREDICTIONS,
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
    /// Normalized average (domain/task) or the first metric's mean (single).
    pub score: Option<f64>,
    /// Cases that got upstream's error answer (no attempt succeeded).
    pub answer_errors: usize,
    /// Whose words its prompts were in (see `mb_upstream::Wording::provenance`).
    pub prompts: String,
}

impl Outcome {
    /// The run's fallbacks, memory processing and prediction.
    pub fn fallbacks(&self) -> f64 {
        (self.timing.fallbacks() * self.cases as f64).round()
    }
}

/// Writes predictions (as `predictions_file`) and timing, evaluates and summarizes the cases
/// `finished` in dataset order then `test_idx` (the first entry of a case wins). A run in
/// which no case got an answer is refused with the first case's error.
pub async fn finish(
    setup: &RunSetup,
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
    refuse_all_failed(by_key.values().map(|f| &f.failures))?;
    let predictions: Vec<Prediction> = by_key.values().map(|f| f.prediction.clone()).collect();
    files.write(predictions_file, &predictions)?;
    let per_case: Vec<Value> = by_key
        .values()
        .map(|f| {
            json!({
                "test_idx": f.prediction.test_idx,
                "dataset": f.prediction.dataset,
                "seconds": f.timing,
                "failed_attempts": f.failures.failed_attempts,
                "error": f.failures.error,
                "fallbacks": f.fallbacks,
            })
        })
        .collect();
    files.write(TIMING, &per_case)?;
    let details = evaluate_run(
        files,
        datasets,
        &predictions,
        Graders::of(&setup.services.llm),
    )
    .await?;
    // After the evaluation, so that the judge's calls are in the model usage.
    let run_timing = RunTiming::of(
        by_key.values().map(|f| (f.timing, &f.failures)),
        &setup.services.llm,
    );
    let (timing, answer_errors) = (run_timing.mean, run_timing.answer_errors);
    let summary = summarize(
        files,
        setup.kind,
        set_name,
        datasets,
        &details,
        setup.numpy_scores,
        Some(run_timing.summary),
    )?;
    Ok(Outcome {
        system: spec.name,
        dir: files.dir().to_path_buf(),
        cases: by_key.len(),
        timing,
        score: score(setup, &summary),
        prompts: prompts_of(&summary),
        answer_errors,
    })
}

/// What a run's cases cost, for its `summary.json`.
pub struct RunTiming {
    /// The mean cost of a case.
    pub mean: CaseTiming,
    /// Cases no attempt answered, scored with upstream's error answer.
    pub answer_errors: usize,
    /// The `timing` block: the means per case, the cases and their answer failures, and by role
    /// and operation the model usage and fallbacks of the work done since the last run finished
    /// (a memory reused from an earlier run has its own in `memorization.json`).
    pub summary: Value,
}

impl RunTiming {
    /// Sums the `cases`' costs and answer failures, and takes the model usage and fallbacks
    /// `llm` counted since they were last taken.
    pub fn of<'a>(
        cases: impl Iterator<Item = (CaseTiming, &'a AnswerFailures)>,
        llm: &LlmStack,
    ) -> RunTiming {
        let (mut sum, mut count, mut answer_errors, mut failed_attempts) =
            (CaseTiming::default(), 0usize, 0usize, 0u32);
        for (timing, failures) in cases {
            sum = sum.plus(timing);
            count += 1;
            answer_errors += usize::from(failures.gave_up());
            failed_attempts += failures.failed_attempts;
        }
        let mean = sum.over(count as f64);
        let summary = json!({
            "mean_seconds_per_case": mean,
            "memory_processing_seconds_per_case": mean.memory_seconds(),
            "prediction_seconds_per_case": mean.prediction_seconds(),
            "llm_calls_per_case": mean.llm_calls(),
            "tokens_per_case": mean.tokens(),
            "cases": count,
            "answer_errors": answer_errors,
            "answer_failed_attempts": failed_attempts,
            "model_usage": llm.ledger.take(),
            "prompts": llm.wording.take_provenance(),
            "fallbacks": {
                "memory": (mean.fallbacks_memory * count as f64).round(),
                "prediction": (mean.fallbacks_predict * count as f64).round(),
                "by_operation": llm.take_fallbacks(),
            },
            "resends": {
                "by_operation": llm.take_resends(),
                "cap_hits": llm.take_cap_hits(),
            },
        });
        RunTiming {
            mean,
            answer_errors,
            summary,
        }
    }
}

/// The outcome of a step whose `summary.json` is written (the last file a step writes).
fn completed(
    setup: &RunSetup,
    spec: &'static SystemSpec,
    files: &RunFiles,
) -> Result<Option<Outcome>, HarnessError> {
    if !files.path(SUMMARY).is_file() {
        return Ok(None);
    }
    let summary: Value = files.read(SUMMARY)?;
    let timing = &summary["timing"];
    Ok(Some(Outcome {
        system: spec.name,
        dir: files.dir().to_path_buf(),
        cases: timing["cases"].as_u64().unwrap_or_default() as usize,
        timing: serde_json::from_value(timing["mean_seconds_per_case"].clone()).unwrap_or_default(),
        score: score(setup, &summary),
        answer_errors: timing["answer_errors"].as_u64().unwrap_or_default() as usize,
        prompts: prompts_of(&summary),
    }))
}

/// Whose words a run's prompts were in, from its summary (runs from before upstream's words
/// could be used had the paraphrase).
pub fn prompts_of(summary: &Value) -> String {
    summary["prompts"]
        .as_str()
        .unwrap_or(mb_upstream::PARAPHRASED)
        .to_string()
}

/// The score a run's table shows: the normalized average (domain/task) or the first metric's
/// mean (single).
fn score(setup: &RunSetup, summary: &Value) -> Option<f64> {
    if setup.kind == DatasetType::Single {
        setup.datasets[0]
            .config
            .test_metrics
            .first()
            .and_then(|m| summary["summary"][m].as_f64())
    } else {
        summary["summary"]["average"].as_f64()
    }
}

impl LogEntry for Finished {
    type Key = (String, u64);

    fn key(&self) -> (String, u64) {
        (self.prediction.dataset.clone(), self.prediction.test_idx)
    }

    fn gave_up(&self) -> bool {
        self.failures.gave_up()
    }
}

impl PartialLog<Finished> {
    /// The `rows` of `dataset` the log did not hold when opened.
    pub fn todo<'a>(&self, dataset: &Dataset, rows: &'a [Row]) -> Vec<&'a Row> {
        rows.iter()
            .filter(|row| !self.holds(&(dataset.name().to_string(), row.test_idx)))
            .collect()
    }
}
