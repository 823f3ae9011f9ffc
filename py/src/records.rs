//! What crosses the boundary as Python objects: records and hits coming out, records and
//! batches going in.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use mb_engine::{Batch, Filter, Hit, NewRecord, Record, RecordId};
use pyo3::prelude::*;

use crate::errors::Raised;

/// A stored memory, as returned by `get`, `records` and searches.
#[pyclass(frozen, get_all, name = "Record", module = "memorybench._native")]
pub struct PyRecord {
    /// Engine-assigned id, increasing with insertion.
    pub id: u64,
    /// The indexed text.
    pub text: String,
    /// Content shown instead of the text, if any.
    pub body: Option<String>,
    /// String attributes.
    pub attributes: BTreeMap<String, String>,
    /// Creation time, milliseconds since the epoch.
    pub created_at_ms: i64,
    /// Sequence number of the write that last stored it.
    pub seq: u64,
}

#[pymethods]
impl PyRecord {
    /// `body` if present, the indexed `text` otherwise.
    #[getter]
    fn content(&self) -> &str {
        self.body.as_deref().unwrap_or(&self.text)
    }

    fn __repr__(&self) -> String {
        format!("Record(id={}, text={:?})", self.id, self.text)
    }
}

impl From<Record> for PyRecord {
    fn from(record: Record) -> PyRecord {
        PyRecord {
            id: record.id.0,
            text: record.text,
            body: record.body,
            attributes: record.attributes,
            created_at_ms: record.created_at_ms,
            seq: record.seq,
        }
    }
}

/// One search result: the record and its score (higher is better).
#[pyclass(frozen, get_all, name = "Hit", module = "memorybench._native")]
pub struct PyHit {
    /// The matching record.
    pub record: Py<PyRecord>,
    /// BM25, cosine similarity or fused score, by search kind.
    pub score: f32,
}

#[pymethods]
impl PyHit {
    fn __repr__(&self) -> String {
        format!(
            "Hit(score={:.4}, {})",
            self.score,
            self.record.get().__repr__()
        )
    }
}

/// Hits as Python objects.
pub fn hits(py: Python<'_>, hits: Vec<Hit>) -> PyResult<Vec<PyHit>> {
    hits.into_iter()
        .map(|hit| {
            Ok(PyHit {
                record: Py::new(py, PyRecord::from(hit.record))?,
                score: hit.score,
            })
        })
        .collect()
}

/// The engine's record from the keyword arguments of `put`, `update` and `Batch.put`.
pub fn new_record(
    text: String,
    vectors: Option<HashMap<String, Vec<f32>>>,
    attributes: Option<BTreeMap<String, String>>,
    body: Option<String>,
    created_at_ms: Option<i64>,
) -> NewRecord {
    let mut record = NewRecord::new(text);
    record.body = body;
    record.attributes = attributes.unwrap_or_default();
    record.created_at_ms = created_at_ms;
    let mut vectors: Vec<(String, Vec<f32>)> = vectors.unwrap_or_default().into_iter().collect();
    vectors.sort_by(|a, b| a.0.cmp(&b.0));
    record.vectors = vectors;
    record
}

/// An attribute filter from Python's `{key: value}` (every pair must hold).
pub fn filter(equals: Option<BTreeMap<String, String>>) -> Filter {
    equals
        .unwrap_or_default()
        .into_iter()
        .fold(Filter::new(), |filter, (key, value)| {
            filter.attribute(key, value)
        })
}

/// Writes applied together by `Engine.write`: all or none of them survive a crash.
#[pyclass(frozen, name = "Batch", module = "memorybench._native")]
#[derive(Default)]
pub struct PyBatch {
    batch: Mutex<Batch>,
}

#[pymethods]
impl PyBatch {
    #[new]
    fn new() -> PyBatch {
        PyBatch::default()
    }

    /// Adds a new record.
    #[pyo3(signature = (text, *, vectors=None, attributes=None, body=None, created_at_ms=None))]
    fn put(
        &self,
        text: String,
        vectors: Option<HashMap<String, Vec<f32>>>,
        attributes: Option<BTreeMap<String, String>>,
        body: Option<String>,
        created_at_ms: Option<i64>,
    ) -> PyResult<()> {
        let record = new_record(text, vectors, attributes, body, created_at_ms);
        self.with(|batch| {
            batch.put(record);
        })
    }

    /// Replaces record `id`.
    #[pyo3(signature = (id, text, *, vectors=None, attributes=None, body=None, created_at_ms=None))]
    fn update(
        &self,
        id: u64,
        text: String,
        vectors: Option<HashMap<String, Vec<f32>>>,
        attributes: Option<BTreeMap<String, String>>,
        body: Option<String>,
        created_at_ms: Option<i64>,
    ) -> PyResult<()> {
        let record = new_record(text, vectors, attributes, body, created_at_ms);
        self.with(|batch| {
            batch.update(RecordId(id), record);
        })
    }

    /// Deletes record `id` (nothing if it does not exist).
    fn delete(&self, id: u64) -> PyResult<()> {
        self.with(|batch| {
            batch.delete(RecordId(id));
        })
    }

    /// Sets a namespace state key to a JSON-serializable value.
    fn put_state(&self, py: Python<'_>, key: String, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = crate::json::to_text(py, value)?;
        self.with(|batch| batch.put_state(key, &value).map(drop))?
            .map_err(|error| Raised::from(error).into())
    }

    /// Removes a namespace state key.
    fn delete_state(&self, key: String) -> PyResult<()> {
        self.with(|batch| {
            batch.delete_state(key);
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        self.with(|batch| batch.len())
    }
}

impl PyBatch {
    /// Runs `change` on the batch under its lock.
    fn with<T>(&self, change: impl FnOnce(&mut Batch) -> T) -> PyResult<T> {
        let mut batch = self
            .batch
            .lock()
            .map_err(|_| Raised::new("MemoryBenchError", "a batch was poisoned by a panic"))?;
        Ok(change(&mut batch))
    }

    /// Empties the batch, handing its writes to the caller.
    pub fn take(&self) -> PyResult<Batch> {
        self.with(std::mem::take)
    }
}

/// What a written batch did.
#[pyclass(frozen, get_all, name = "WriteReceipt", module = "memorybench._native")]
pub struct PyWriteReceipt {
    /// Sequence number of the write.
    pub seq: u64,
    /// Ids of the records put, in order.
    pub ids: Vec<u64>,
    /// How many deletions removed a record.
    pub deleted: usize,
}
