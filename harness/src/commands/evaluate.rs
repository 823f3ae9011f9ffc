//! `evaluate`: scores an existing run's predictions again (for example after configuring a
//! judge model) and rewrites its details and summary. Its arguments serve `summarize` too.

use std::path::PathBuf;

use clap::Args;
use mb_datasets::catalog::DatasetType;
use mb_datasets::Dataset;
use mb_eval::{EvaluateDetail, Graders, NumpyScores};
use mb_eval::{RunFiles, RUN_CONFIG, SUMMARY};
use mb_upstream::Upstream;
use serde_json::Value;

use crate::data::DataArgs;
use crate::error::HarnessError;
use crate::llm_args::LlmArgs;
use crate::run::evaluation::{evaluate_run, summarize};
use crate::stdout::line;
use crate::store::Store;

/// Arguments of `evaluate` and `summarize`.
#[derive(Args, Debug)]
pub struct RunDirArgs {
    /// A run directory (holding run_config.json and predict.json).
    pub(crate) run: PathBuf,
    /// The data the run used, when it is not the one its run_config.json names.
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    llm: LlmArgs,
    /// Engine directory holding recorded judge answers.
    #[arg(long, default_value = "runs/store")]
    store: PathBuf,
}

/// The run's set and datasets, from its `run_config.json` (and `--data` when given).
pub(crate) fn run_datasets(
    args: &RunDirArgs,
    files: &RunFiles,
    upstream: Option<&Upstream>,
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
    let datasets = data.load_set(upstream, kind, &set_name, None)?;
    Ok((kind, set_name, datasets))
}

/// `evaluate`: scores the run's `predict.json` again and rewrites its details and summary.
pub fn run(args: &RunDirArgs) -> Result<(), HarnessError> {
    let files = RunFiles::new(&args.run);
    let store = Store::open(Some(&args.store))?;
    // The server (with `--llm local`) runs until this command returns.
    let (settings, _server) = args.llm.start()?;
    let llm = args.llm.stack(&settings, &store.engine)?;
    let (kind, set_name, datasets) = run_datasets(args, &files, llm.wording.checkout())?;
    let predictions = files.read_predictions()?;
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| HarnessError::Usage(format!("cannot start the async runtime: {e}")))?;
    let details = runtime.block_on(evaluate_run(
        &files,
        &datasets,
        &predictions,
        Graders::of(&llm),
    ))?;
    rewrite_summary(&files, kind, &set_name, &datasets, &details)
}

/// Rewrites the run's summary from `details`, keeping its `timing`, and prints the scores
/// (`evaluate` and `summarize` end alike).
pub(crate) fn rewrite_summary(
    files: &RunFiles,
    kind: DatasetType,
    set_name: &str,
    datasets: &[Dataset],
    details: &[EvaluateDetail],
) -> Result<(), HarnessError> {
    let timing = previous_timing(files);
    // Upstream's tools that score or summarize a run again read evaluate_details.json, where
    // numpy's numbers are plain numbers again: they count.
    let summary = summarize(
        files,
        kind,
        set_name,
        datasets,
        details,
        NumpyScores::Counted,
        timing,
    )?;
    line(serde_json::to_string_pretty(&summary["summary"]).unwrap_or_default())?;
    Ok(())
}

/// The `timing` of the run's current summary, kept when the summary is rewritten.
fn previous_timing(files: &RunFiles) -> Option<Value> {
    files
        .read::<Value>(SUMMARY)
        .ok()
        .and_then(|s| s.get("timing").cloned())
}
