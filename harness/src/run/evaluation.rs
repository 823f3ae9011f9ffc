//! Evaluating and summarizing a run directory's predictions: after every regime, and in the
//! `evaluate` and `summarize` commands.

use mb_datasets::catalog::DatasetType;
use mb_datasets::Dataset;
use mb_eval::{builtin_statistics, summarize_run};
use mb_eval::{evaluate, evaluator_for, EvaluateDetail, Graders, NumpyScores, Prediction};
use mb_eval::{RunFiles, SUMMARY};
use serde_json::Value;

use crate::error::HarnessError;

/// Scores `predictions` with each dataset's metrics (model-scored ones through `graders`), writes
/// `evaluate_details.json`, and returns them.
pub async fn evaluate_run(
    files: &RunFiles,
    datasets: &[Dataset],
    predictions: &[Prediction],
    graders: Graders<'_>,
) -> Result<Vec<EvaluateDetail>, HarnessError> {
    let details = score(files, datasets, predictions, graders).await?;
    files.write_details(&details)?;
    Ok(details)
}

/// Scores `predictions` with each dataset's metrics; an error names the run directory, where
/// the predictions are.
pub async fn score(
    files: &RunFiles,
    datasets: &[Dataset],
    predictions: &[Prediction],
    graders: Graders<'_>,
) -> Result<Vec<EvaluateDetail>, HarnessError> {
    let mut details = Vec::new();
    for dataset in datasets {
        let evaluator = evaluator_for(&dataset.config)?;
        let mine: Vec<Prediction> = predictions
            .iter()
            .filter(|p| p.dataset == dataset.name())
            .cloned()
            .collect();
        let scored = evaluate(dataset, &mine, evaluator.as_ref(), graders)
            .await
            .map_err(|e| {
                HarnessError::Usage(format!(
                    "predictions are in {}; evaluation failed: {e}",
                    files.dir().display()
                ))
            })?;
        details.extend(scored);
    }
    Ok(details)
}

/// Upstream's `summary.json` of the run, its numpy scores counted as `numpy_scores` says,
/// with `timing` (when given) kept alongside.
pub fn summarize(
    files: &RunFiles,
    kind: DatasetType,
    set_name: &str,
    datasets: &[Dataset],
    details: &[EvaluateDetail],
    numpy_scores: NumpyScores,
    timing: Option<Value>,
) -> Result<Value, HarnessError> {
    let configs: Vec<_> = datasets.iter().map(|d| d.config.clone()).collect();
    let counted = numpy_scores.apply(datasets, details);
    let mut summary = summarize_run(kind, set_name, &configs, &counted, &builtin_statistics()?)?;
    if let Some(timing) = timing {
        summary["prompts"] = timing["prompts"].clone();
        summary["timing"] = timing;
    }
    files.write(SUMMARY, &summary)?;
    Ok(summary)
}
