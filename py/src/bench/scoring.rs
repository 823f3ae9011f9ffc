//! Scoring answers and summarizing scores, on the Rust side of `memorybench.benchmark`.

use std::sync::Arc;

use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::Dataset;
use mb_eval::{evaluate, evaluator_for, EvalError, EvaluateDetail, Graders, Prediction};
use mb_llm::LlmStack;
use serde_json::Value;

use crate::errors::{PyResultOf, Raised};
use crate::runtime::runtime;

/// Scores each dataset's share of `predictions` with its metrics, datasets in the order given
/// and each one's details by `test_idx` (upstream's `_evaluate`).
pub fn score(
    datasets: &[Arc<Dataset>],
    predictions: &[Prediction],
    models: &LlmStack,
) -> PyResultOf<Vec<EvaluateDetail>> {
    let runtime = runtime()?;
    let mut details = Vec::new();
    for dataset in datasets {
        let evaluator = evaluator_for(&dataset.config).map_err(eval_error)?;
        let mine: Vec<Prediction> = predictions
            .iter()
            .filter(|p| p.dataset == dataset.name())
            .cloned()
            .collect();
        let scored = runtime
            .block_on(evaluate(
                dataset,
                &mine,
                evaluator.as_ref(),
                Graders::of(models),
            ))
            .map_err(eval_error)?;
        details.extend(scored);
    }
    Ok(details)
}

/// Upstream's `summary_results` over `details`: the mean of each test metric for a single
/// dataset; for a domain or task, the per-group averages normalized with the statistics of
/// `statistics` (upstream's `final_evaluate_summary_wo_details.json` layout; the built-in
/// copy when `None`).
pub fn summarize(
    kind: DatasetType,
    name: &str,
    details: &[EvaluateDetail],
    statistics: Option<&Value>,
) -> PyResultOf<Value> {
    let catalog = Catalog::builtin().map_err(|e| Raised::new("DataError", e.to_string()))?;
    let configs = catalog
        .resolve(kind, name)
        .map_err(|e| Raised::new("DataError", e.to_string()))?;
    let builtin;
    let statistics = match statistics {
        Some(statistics) => statistics,
        None => {
            builtin = mb_eval::builtin_statistics()
                .map_err(|e| Raised::new("InvalidInputError", e.to_string()))?;
            &builtin
        }
    };
    mb_eval::summarize_run(kind, name, &configs, details, statistics)
        .map_err(|e| Raised::new("InvalidInputError", e.to_string()))
}

/// An evaluation error as a Python exception: a model's failure (or its absence) is a
/// `ModelError`, anything about the predictions an `InvalidInputError`.
fn eval_error(error: EvalError) -> Raised {
    match error {
        EvalError::NeedsJudge { .. } | EvalError::Judge { .. } => {
            Raised::new("ModelError", error.to_string())
        }
        other => Raised::new("InvalidInputError", other.to_string()),
    }
}
