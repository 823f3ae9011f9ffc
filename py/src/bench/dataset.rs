//! One loaded MemoryBench dataset as a Python object: its configuration, its rows in
//! upstream's shape, its corpus, and scoring answers to its rows.

use std::path::PathBuf;
use std::sync::Arc;

use mb_datasets::{Dataset, SplitName};
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::rows::upstream_row;
use super::scoring::score;
use crate::errors::{PyResultOf, Raised};
use crate::json;
use crate::models::{open_models, PackagedLocal};

/// A dataset of MemoryBench, loaded (both splits and its corpus); `memorybench.benchmark`
/// wraps it in upstream's dataset interface.
#[pyclass(frozen, name = "BenchDataset", module = "memorybench._native")]
pub struct PyBenchDataset {
    pub(super) dataset: Arc<Dataset>,
}

impl PyBenchDataset {
    fn split(name: &str) -> PyResultOf<SplitName> {
        match name {
            "train" => Ok(SplitName::Train),
            "test" => Ok(SplitName::Test),
            other => Err(Raised::new(
                "InvalidInputError",
                format!("split {other:?}: the splits are \"train\" and \"test\""),
            )),
        }
    }

    fn row_or_error(&self, test_idx: u64) -> PyResultOf<(SplitName, &mb_datasets::Row)> {
        self.dataset.row(test_idx).ok_or_else(|| {
            Raised::new(
                "DataError",
                format!(
                    "test_idx {test_idx} not found in dataset {}",
                    self.dataset.name()
                ),
            )
        })
    }
}

#[pymethods]
impl PyBenchDataset {
    /// The dataset's name (`Locomo-0`, `JRE-L`, ...).
    #[getter]
    fn dataset_name(&self) -> &str {
        self.dataset.name()
    }

    /// The metrics its summary reports.
    #[getter]
    fn test_metrics(&self) -> Vec<String> {
        self.dataset.config.test_metrics.clone()
    }

    /// The answer length limit in tokens (upstream's `max_output_len`, 8192 when unset).
    #[getter]
    fn max_output_len(&self) -> u32 {
        self.dataset.config.max_output_tokens()
    }

    /// Its task shape (`Long-Short`, ...).
    #[getter]
    fn task_tag(&self) -> &str {
        &self.dataset.config.task_tag
    }

    /// Its domain (`Open-Domain`, `Legal`, `Academic&Knowledge`).
    #[getter]
    fn domain_tag(&self) -> &str {
        &self.dataset.config.domain_tag
    }

    /// Whether it comes with a conversation corpus (LoCoMo, DialSim).
    #[getter]
    fn has_corpus(&self) -> bool {
        self.dataset.corpus.is_some()
    }

    /// The number of the corpus's sessions, `None` without a corpus.
    #[getter]
    fn session_cnt(&self) -> Option<usize> {
        self.dataset.corpus.as_ref().map(|c| c.sessions.len())
    }

    /// The rows of `split` ("train" or "test") in stored order, each a dict as upstream's
    /// `get_data` returns it (without `set_name`).
    fn rows<'py>(&self, py: Python<'py>, split: &str) -> PyResult<Bound<'py, PyList>> {
        let split = Self::split(split)?;
        let rows: Vec<serde_json::Value> = self
            .dataset
            .rows(split)
            .iter()
            .map(|row| serde_json::Value::Object(upstream_row(row, None)))
            .collect();
        Ok(json::to_python(py, &serde_json::Value::Array(rows))?.cast_into::<PyList>()?)
    }

    /// The row `test_idx` from either split, with its `set_name`.
    fn get_data<'py>(&self, py: Python<'py>, test_idx: u64) -> PyResult<Bound<'py, PyAny>> {
        let (split, row) = self.row_or_error(test_idx)?;
        json::to_python(
            py,
            &serde_json::Value::Object(upstream_row(row, Some(split))),
        )
    }

    /// The messages that open a conversation about row `test_idx`: its prompt as one user
    /// message, or its prepared chat.
    fn get_initial_chat_messages<'py>(
        &self,
        py: Python<'py>,
        test_idx: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (_, row) = self.row_or_error(test_idx)?;
        let messages = serde_json::to_value(row.input.initial_messages())
            .map_err(|e| Raised::new("DataError", format!("row {test_idx}: {e}")))?;
        json::to_python(py, &messages)
    }

    /// The corpus in LoCoMo's `conversation` form, `None` without a corpus.
    fn corpus<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.dataset
            .corpus
            .as_ref()
            .map(|c| json::to_python(py, &c.to_locomo_value()))
            .transpose()
    }

    /// Scores `responses` (`{"test_idx", "response"}` dicts) with the dataset's metrics: one
    /// `{"test_idx", "metrics"}` dict each, by `test_idx`. Judged metrics use the models `llm`
    /// chooses (see `memorybench.benchmark.evaluate`). Runs without the GIL.
    #[pyo3(signature = (responses, *, llm="offline", upstream=None))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        responses: &Bound<'py, PyAny>,
        llm: &str,
        upstream: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let name = self.dataset.name().to_string();
        let mut predictions = super::predictions(py, responses, Some(&name))?;
        predictions
            .iter_mut()
            .for_each(|p| p.dataset = name.clone());
        let dataset = Arc::clone(&self.dataset);
        let packaged = PackagedLocal::find(py, llm)?;
        let llm = llm.to_string();
        let details = py.detach(move || -> PyResultOf<Vec<serde_json::Value>> {
            let models = open_models(&llm, None, upstream, packaged)?;
            let details = score(&[dataset], &predictions, &models.stack)?;
            Ok(details
                .into_iter()
                .map(|d| serde_json::json!({"test_idx": d.test_idx, "metrics": d.metrics}))
                .collect())
        })?;
        json::to_python(py, &serde_json::Value::Array(details))
    }

    fn __len__(&self) -> usize {
        self.dataset.train.len() + self.dataset.test.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "BenchDataset({}, train={}, test={})",
            self.dataset.name(),
            self.dataset.train.len(),
            self.dataset.test.len()
        )
    }
}
