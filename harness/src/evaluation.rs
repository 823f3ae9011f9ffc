//! Evaluating and summarizing a run directory: after `off-policy`, and as the `evaluate` and
//! `summarize` commands on an existing run (for example after configuring a judge model).

use std::path::PathBuf;

use clap::Args;
use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::evaluate::{evaluate, evaluator_for, EvaluateDetail, Prediction};
use mb_datasets::results::{RunFiles, RUN_CONFIG, SUMMARY};
use mb_datasets::summary::{builtin_statistics, summarize_run};
use mb_datasets::{load, Dataset};
use mb_llm::ops::Backend;
use serde_json::Value;

use crate::data::DataArgs;
use crate::llm_args::LlmArgs;
use crate::runtime::{HarnessError, Store};

/// Arguments of `evaluate` and `summarize`.
#[derive(Args, Debug)]
pub struct RunDirArgs {
    /// A run directory (holding run_config.json and predict.json).
    run: PathBuf,
    /// The data the run used, when it is not the one its run_config.json names.
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    llm: LlmArgs,
    /// Engine directory holding recorded judge answers.
    #[arg(long, default_value = "runs/store")]
    store: PathBuf,
}

/// Scores `predictions` with each dataset's metrics (judge metrics through `judge`), writes
/// `evaluate_details.json`, and returns them.
pub async fn evaluate_run(
    files: &RunFiles,
    datasets: &[Dataset],
    predictions: &[Prediction],
    judge: &Backend,
) -> Result<Vec<EvaluateDetail>, HarnessError> {
    let mut details = Vec::new();
    for dataset in datasets {
        let evaluator = evaluator_for(&dataset.config)?;
        let mine: Vec<Prediction> = predictions
            .iter()
            .filter(|p| p.dataset == dataset.name())
            .cloned()
            .collect();
        let scored = evaluate(dataset, &mine, evaluator.as_ref(), judge)
            .await
            .map_err(|e| {
                HarnessError::Usage(format!(
                    "predictions are in {}; evaluation failed: {e}",
                    files.dir().display()
                ))
            })?;
        details.extend(scored);
    }
    files.write_details(&details)?;
    Ok(details)
}

/// Upstream's `summary.json` of the run, with `timing` (when given) kept alongside.
pub fn summarize(
    files: &RunFiles,
    kind: DatasetType,
    set_name: &str,
    datasets: &[Dataset],
    details: &[EvaluateDetail],
    timing: Option<Value>,
) -> Result<Value, HarnessError> {
    let configs: Vec<_> = datasets.iter().map(|d| d.config.clone()).collect();
    let mut summary = summarize_run(kind, set_name, &configs, details, &builtin_statistics()?)?;
    if let Some(timing) = timing {
        summary["timing"] = timing;
    }
    files.write(SUMMARY, &summary)?;
    Ok(summary)
}

/// The run's set and datasets, from its `run_config.json` (and `--data` when given).
fn run_datasets(
    args: &RunDirArgs,
    files: &RunFiles,
) -> Result<(DatasetType, String, Vec<Dataset>), HarnessError> {
    let config: Value = files.read(RUN_CONFIG)?;
    let field = |name: &str| {
        config[name].as_str().map(str::to_string).ok_or_else(|| {
            HarnessError::Usage(format!(
                "{}: {RUN_CONFIG} has no {name}",
                files.dir().display()
            ))
        })
    };
    let kind: DatasetType = field("dataset_type")?.parse()?;
    let set_name = field("set_name")?;
    let data = DataArgs {
        data: args
            .data
            .data
            .clone()
            .or_else(|| config["data"].as_str().map(PathBuf::from)),
    };
    let datasets = load(
        data.source()?.as_ref(),
        &Catalog::builtin()?,
        kind,
        &set_name,
    )?;
    Ok((kind, set_name, datasets))
}

/// `evaluate`: scores the run's `predict.json` again and rewrites its details and summary.
pub fn run_evaluate(args: &RunDirArgs) -> Result<(), HarnessError> {
    let files = RunFiles::new(&args.run);
    let (kind, set_name, datasets) = run_datasets(args, &files)?;
    let predictions = files.read_predictions()?;
    let store = Store::open(Some(&args.store))?;
    // The server (with `--llm local`) runs until this command returns.
    let (settings, _server) = args.llm.start()?;
    let llm = args.llm.stack(&settings, &store.engine)?;
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| HarnessError::Usage(format!("cannot start the async runtime: {e}")))?;
    let details = runtime.block_on(evaluate_run(&files, &datasets, &predictions, &llm.judge))?;
    let timing = previous_timing(&files);
    let summary = summarize(&files, kind, &set_name, &datasets, &details, timing)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&summary["summary"]).unwrap_or_default()
    );
    Ok(())
}

/// `summarize`: recomputes the run's summary from its `evaluate_details.json`.
pub fn run_summarize(args: &RunDirArgs) -> Result<(), HarnessError> {
    let files = RunFiles::new(&args.run);
    let (kind, set_name, datasets) = run_datasets(args, &files)?;
    let details = files.read_details()?;
    let timing = previous_timing(&files);
    let summary = summarize(&files, kind, &set_name, &datasets, &details, timing)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&summary["summary"]).unwrap_or_default()
    );
    Ok(())
}

fn previous_timing(files: &RunFiles) -> Option<Value> {
    files
        .read::<Value>(SUMMARY)
        .ok()
        .and_then(|s| s.get("timing").cloned())
}
