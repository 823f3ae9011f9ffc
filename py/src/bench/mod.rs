//! MemoryBench itself from Python: loading its datasets, scoring answers and summarizing scores
//! (upstream's `load_memory_bench`, `evaluate` and `summary_results`, which the pure-Python
//! `memorybench.benchmark` presents with upstream's names and shapes).

mod dataset;
mod rows;
mod scoring;

use std::path::PathBuf;
use std::sync::Arc;

use mb_datasets::catalog::{Catalog, DatasetType};
use mb_eval::{EvaluateDetail, Prediction};
use mb_upstream::Upstream;
use pyo3::prelude::*;

pub use dataset::PyBenchDataset;

use crate::errors::{PyResultOf, Raised};
use crate::json;
use crate::models::{open_models, PackagedLocal};

/// Adds the module's classes and functions.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyBenchDataset>()?;
    module.add_function(wrap_pyfunction!(load_datasets, module)?)?;
    module.add_function(wrap_pyfunction!(evaluate_datasets, module)?)?;
    module.add_function(wrap_pyfunction!(summarize, module)?)?;
    Ok(())
}

fn dataset_type(text: &str) -> PyResultOf<DatasetType> {
    text.parse().map_err(|_| {
        Raised::new(
            "InvalidInputError",
            format!(
                "unknown dataset_type {text:?}, please choose from ['single', 'domain', 'task']"
            ),
        )
    })
}

/// The datasets of `dataset_type`/`name` ("single" and a dataset, or "domain"/"task" and a
/// set), in upstream's order, read from `data` (a local copy of the Hugging Face repository),
/// else `$MEMORY_BENCH_PATH`, else the built-in sample (its LoCoMo questions in the words of
/// the checkout `upstream` when given). Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (dataset_type, name, *, data=None, upstream=None))]
fn load_datasets(
    py: Python<'_>,
    dataset_type: &str,
    name: &str,
    data: Option<PathBuf>,
    upstream: Option<PathBuf>,
) -> PyResult<Vec<PyBenchDataset>> {
    let kind = self::dataset_type(dataset_type)?;
    let name = name.to_string();
    let datasets = py.detach(move || -> PyResultOf<Vec<PyBenchDataset>> {
        let data_error = |e: mb_datasets::DataError| Raised::new("DataError", e.to_string());
        let upstream = upstream
            .map(|dir| Upstream::open(&dir))
            .transpose()
            .map_err(|e| Raised::new("InvalidInputError", format!("upstream: {e}")))?;
        let words = upstream
            .as_ref()
            .map(|u| u as &dyn mb_datasets::import::LocomoWords);
        let source = mb_datasets::open_source(data.as_deref(), words).map_err(data_error)?;
        let catalog = Catalog::builtin().map_err(|e| Raised::new("DataError", e.to_string()))?;
        let datasets =
            mb_datasets::load(source.as_ref(), &catalog, kind, &name).map_err(data_error)?;
        Ok(datasets
            .into_iter()
            .map(|dataset| PyBenchDataset {
                dataset: Arc::new(dataset),
            })
            .collect())
    })?;
    Ok(datasets)
}

/// Scores `predicts` (`{"test_idx", "response", "dataset"}` dicts) against `datasets`: one
/// `{"test_idx", "metrics", "dataset"}` dict per prediction, datasets in the order given, each
/// by `test_idx`. Judged metrics use the models `llm` chooses, prompts in the words of
/// `upstream` (else the settings'). Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (datasets, predicts, *, llm="offline", upstream=None))]
fn evaluate_datasets<'py>(
    py: Python<'py>,
    datasets: Vec<PyRef<'py, PyBenchDataset>>,
    predicts: &Bound<'py, PyAny>,
    llm: &str,
    upstream: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let datasets: Vec<_> = datasets.iter().map(|d| Arc::clone(&d.dataset)).collect();
    let predictions = predictions(py, predicts, None)?;
    let packaged = PackagedLocal::find(py, llm)?;
    let llm = llm.to_string();
    let scoring = datasets.clone();
    let details = py.detach(move || -> PyResultOf<Vec<EvaluateDetail>> {
        let models = open_models(&llm, None, upstream, packaged)?;
        scoring::score(&scoring, &predictions, &models.stack)
    })?;
    let listed = serde_json::to_value(&details)
        .map_err(|e| Raised::new("InvalidInputError", e.to_string()))?;
    let out = json::to_python(py, &listed)?;
    mark_numpy_scores(py, &datasets, &details, &out)?;
    Ok(out)
}

/// Gives the scores upstream computes as numpy numbers the type `memorybench.benchmark.NumpyFloat`
/// (a `float` subclass, as numpy's are), so that `summary_results` counts them as upstream's
/// does ([`mb_eval::numpy_metric`] names them).
fn mark_numpy_scores(
    py: Python<'_>,
    datasets: &[Arc<mb_datasets::Dataset>],
    details: &[EvaluateDetail],
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let numpy_float = PyModule::import(py, "memorybench.benchmark")?.getattr("NumpyFloat")?;
    for (i, detail) in details.iter().enumerate() {
        let Some(dataset) = datasets.iter().find(|d| d.name() == detail.dataset) else {
            continue;
        };
        let Some(metric) = mb_eval::numpy_metric(dataset, detail) else {
            continue;
        };
        let metrics = out.get_item(i)?.get_item("metrics")?;
        let value = metrics.get_item(metric)?;
        if value.is_instance_of::<pyo3::types::PyFloat>() {
            metrics.set_item(metric, numpy_float.call1((value,))?)?;
        }
    }
    Ok(())
}

/// Upstream's `summary_results` over `evaluate_details`; `statistics` is the JSON text of a
/// normalization file (upstream's `final_evaluate_summary_wo_details.json` layout), the
/// built-in copy when `None`.
#[pyfunction]
#[pyo3(signature = (dataset_type, name, evaluate_details, *, statistics=None))]
fn summarize<'py>(
    py: Python<'py>,
    dataset_type: &str,
    name: &str,
    evaluate_details: &Bound<'py, PyAny>,
    statistics: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let kind = self::dataset_type(dataset_type)?;
    let details: Vec<EvaluateDetail> = items(py, evaluate_details, "evaluate_details")?;
    let statistics = statistics
        .map(serde_json::from_str::<serde_json::Value>)
        .transpose()
        .map_err(|e| Raised::new("InvalidInputError", format!("min_max_config_file: {e}")))?;
    let summary = scoring::summarize(kind, name, &details, statistics.as_ref())?;
    json::to_python(py, &summary)
}

/// Predictions from Python dicts; `dataset` defaults to `default_dataset` where given.
fn predictions(
    py: Python<'_>,
    predicts: &Bound<'_, PyAny>,
    default_dataset: Option<&str>,
) -> PyResult<Vec<Prediction>> {
    let mut values = match json::to_exact_value(py, predicts)? {
        serde_json::Value::Array(values) => values,
        _ => {
            return Err(Raised::new("InvalidInputError", "predicts must be a list of dicts").into())
        }
    };
    if let Some(name) = default_dataset {
        for value in &mut values {
            if let Some(object) = value.as_object_mut() {
                object
                    .entry("dataset")
                    .or_insert_with(|| serde_json::Value::from(name));
            }
        }
    }
    parse_items(values, "predicts")
}

/// A list of dicts, each read as a `T`; an error names the item and what is wrong.
fn items<T: serde::de::DeserializeOwned>(
    py: Python<'_>,
    list: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<Vec<T>> {
    match json::to_exact_value(py, list)? {
        serde_json::Value::Array(values) => parse_items(values, what),
        _ => Err(Raised::new(
            "InvalidInputError",
            format!("{what} must be a list of dicts"),
        )
        .into()),
    }
}

fn parse_items<T: serde::de::DeserializeOwned>(
    values: Vec<serde_json::Value>,
    what: &str,
) -> PyResult<Vec<T>> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            serde_json::from_value(value)
                .map_err(|e| Raised::new("InvalidInputError", format!("{what}[{i}]: {e}")).into())
        })
        .collect()
}
