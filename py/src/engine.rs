//! `memorybench.Engine`: one open store directory, its namespaces, spaces, records and
//! searches. Every call releases the GIL while the engine works, so Python threads search and
//! write in parallel.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use mb_engine::{Analyzer, Engine, EngineOptions, HybridQuery, NamespaceOptions, RecordId, Space};
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::errors::{PyResultOf, Raised};
use crate::records::{hits, new_record, PyBatch, PyHit, PyRecord, PyWriteReceipt};

/// An open store directory. Only one process (and one `Engine`) may have it open at a time;
/// `close()` (or leaving a `with` block) releases it.
#[pyclass(frozen, name = "Engine", module = "memorybench._native")]
pub struct PyEngine {
    slot: RwLock<Option<Arc<Engine>>>,
    path: PathBuf,
}

impl PyEngine {
    /// The open engine, shared; `EngineClosedError` after `close()`.
    pub fn engine(&self) -> PyResultOf<Arc<Engine>> {
        let slot = self
            .slot
            .read()
            .map_err(|_| Raised::closed("the engine (poisoned)"))?;
        slot.clone()
            .ok_or_else(|| Raised::closed(&format!("engine {}", self.path.display())))
    }
}

/// Runs `work` on the engine with the GIL released, turning its error into an exception.
fn run<T: Send>(
    py: Python<'_>,
    engine: &PyEngine,
    work: impl FnOnce(&Engine) -> mb_engine::Result<T> + Send,
) -> PyResult<T> {
    let engine = engine.engine()?;
    py.detach(|| work(&engine))
        .map_err(|e| Raised::from(e).into())
}

#[pymethods]
impl PyEngine {
    /// Opens (creating if `create`) the store at `path`.
    #[new]
    #[pyo3(signature = (path, *, create=true, sync_writes=true))]
    fn open(py: Python<'_>, path: PathBuf, create: bool, sync_writes: bool) -> PyResult<Self> {
        let mut options = EngineOptions::default();
        options.create_if_missing = create;
        options.sync_writes = sync_writes;
        let opened = py.detach(|| Engine::open(&path, options));
        let engine = opened.map_err(Raised::from)?;
        Ok(PyEngine {
            slot: RwLock::new(Some(Arc::new(engine))),
            path,
        })
    }

    /// The store directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.slot.read().map(|slot| slot.is_none()).unwrap_or(true)
    }

    /// Flushes and releases the directory. Memories built on this engine must be closed first;
    /// closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut slot = self
            .slot
            .write()
            .map_err(|_| Raised::closed("the engine (poisoned)"))?;
        let Some(engine) = slot.take() else {
            return Ok(());
        };
        match Arc::try_unwrap(engine) {
            Ok(engine) => py
                .detach(|| engine.close())
                .map_err(|e| Raised::from(e).into()),
            Err(shared) => {
                *slot = Some(shared);
                Err(Raised::new(
                    "MemoryBenchError",
                    "the engine is still used by a memory or a running call: close those first",
                )
                .into())
            }
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<&Bound<'_, PyType>>,
        _value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Makes every acknowledged write durable on disk now (writes are synced by default).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        run(py, self, |e| e.flush())
    }

    /// Flushes, then merges the BM25 index's segments into one: after a bulk load, text search
    /// answers sooner (tantivy prunes per segment). Rankings are unchanged.
    fn merge_lexical_segments(&self, py: Python<'_>) -> PyResult<()> {
        run(py, self, |e| e.merge_lexical_segments())
    }

    /// Sets the HNSW beam width of later vector searches: wider finds more of the true nearest
    /// neighbours in large collections, and takes longer. No reopen, no rebuild.
    fn set_ef_search(&self, ef: usize) -> PyResult<()> {
        self.engine()?.set_ef_search(ef);
        Ok(())
    }

    /// Creates a namespace whose BM25 text is read by `analyzer`: "standard" (Whoosh's, the
    /// default), "stemmed" (English Porter stems) or "cjk" (jieba words).
    #[pyo3(signature = (name, *, analyzer="standard"))]
    fn create_namespace(&self, py: Python<'_>, name: &str, analyzer: &str) -> PyResult<()> {
        let options = namespace_options(analyzer)?;
        run(py, self, |e| e.create_namespace(name, options).map(drop))
    }

    /// Creates the namespace unless it exists.
    #[pyo3(signature = (name, *, analyzer="standard"))]
    fn ensure_namespace(&self, py: Python<'_>, name: &str, analyzer: &str) -> PyResult<()> {
        let options = namespace_options(analyzer)?;
        run(py, self, |e| e.ensure_namespace(name, options).map(drop))
    }

    /// Deletes a namespace and everything in it.
    fn drop_namespace(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        run(py, self, |e| e.drop_namespace(name))
    }

    /// Deletes the named namespaces that exist, then compacts the store so that no byte of
    /// what they held remains in any file of the engine directory (copies made outside it,
    /// such as backups, keep theirs). Returns how many were dropped.
    fn forget(&self, py: Python<'_>, names: Vec<String>) -> PyResult<usize> {
        run(py, self, |e| {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            e.forget(&names)
        })
    }

    /// Rewrites the store so that deleted records and dropped namespaces are gone from disk
    /// (lexical index merged, RocksDB flushed and compacted). Takes time with the store's size.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        run(py, self, |e| e.compact())
    }

    /// The namespaces' names, sorted.
    fn namespaces(&self) -> PyResult<Vec<String>> {
        let mut names: Vec<String> = self
            .engine()?
            .namespaces()
            .into_iter()
            .map(|info| info.name)
            .collect();
        names.sort();
        Ok(names)
    }

    /// Records in a namespace.
    fn count(&self, py: Python<'_>, namespace: &str) -> PyResult<u64> {
        run(py, self, |e| e.count(namespace))
    }

    /// Declares an embedding space: vectors of `dim` components, compared by cosine.
    fn create_space(&self, py: Python<'_>, name: &str, dim: usize) -> PyResult<()> {
        run(py, self, |e| {
            e.create_space(Space::new(name, dim)).map(drop)
        })
    }

    /// The spaces as `{name: dim}`.
    fn spaces(&self) -> PyResult<BTreeMap<String, usize>> {
        Ok(self
            .engine()?
            .spaces()
            .into_iter()
            .map(|space| (space.name, space.dim))
            .collect())
    }

    /// Stores a record; returns its id.
    #[pyo3(signature = (namespace, text, *, vectors=None, attributes=None, body=None, created_at_ms=None))]
    #[allow(clippy::too_many_arguments)]
    fn put(
        &self,
        py: Python<'_>,
        namespace: &str,
        text: String,
        vectors: Option<HashMap<String, Vec<f32>>>,
        attributes: Option<BTreeMap<String, String>>,
        body: Option<String>,
        created_at_ms: Option<i64>,
    ) -> PyResult<u64> {
        let record = new_record(text, vectors, attributes, body, created_at_ms);
        run(py, self, |e| e.put(namespace, record)).map(|id| id.0)
    }

    /// Replaces record `id` (`RecordNotFoundError` if it does not exist).
    #[pyo3(signature = (namespace, id, text, *, vectors=None, attributes=None, body=None, created_at_ms=None))]
    #[allow(clippy::too_many_arguments)]
    fn update(
        &self,
        py: Python<'_>,
        namespace: &str,
        id: u64,
        text: String,
        vectors: Option<HashMap<String, Vec<f32>>>,
        attributes: Option<BTreeMap<String, String>>,
        body: Option<String>,
        created_at_ms: Option<i64>,
    ) -> PyResult<()> {
        let record = new_record(text, vectors, attributes, body, created_at_ms);
        run(py, self, |e| e.update(namespace, RecordId(id), record))
    }

    /// Deletes record `id`; whether it existed.
    fn delete(&self, py: Python<'_>, namespace: &str, id: u64) -> PyResult<bool> {
        run(py, self, |e| e.delete(namespace, RecordId(id)))
    }

    /// Deletes every record whose attributes equal all of `filter` (`{}` deletes every record)
    /// in one atomic write; how many were deleted.
    fn delete_where(
        &self,
        py: Python<'_>,
        namespace: &str,
        filter: BTreeMap<String, String>,
    ) -> PyResult<usize> {
        let filter = crate::records::filter(Some(filter));
        run(py, self, |e| e.delete_where(namespace, &filter))
    }

    /// The records whose attributes equal all of `filter` (`{}`: every record), in id order;
    /// only the matches are decoded.
    fn records_where(
        &self,
        py: Python<'_>,
        namespace: &str,
        filter: BTreeMap<String, String>,
    ) -> PyResult<Vec<PyRecord>> {
        let filter = crate::records::filter(Some(filter));
        run(py, self, |e| e.records_where(namespace, &filter))
            .map(|records| records.into_iter().map(PyRecord::from).collect())
    }

    /// Applies a batch atomically and empties it.
    fn write(&self, py: Python<'_>, namespace: &str, batch: &PyBatch) -> PyResult<PyWriteReceipt> {
        let batch = batch.take()?;
        let receipt = run(py, self, |e| e.write(namespace, batch))?;
        Ok(PyWriteReceipt {
            seq: receipt.seq,
            ids: receipt.ids.into_iter().map(|id| id.0).collect(),
            deleted: receipt.deleted,
        })
    }

    /// Record `id`, or None.
    fn get(&self, py: Python<'_>, namespace: &str, id: u64) -> PyResult<Option<PyRecord>> {
        run(py, self, |e| e.get(namespace, RecordId(id))).map(|r| r.map(PyRecord::from))
    }

    /// Every record of a namespace, in id order.
    fn records(&self, py: Python<'_>, namespace: &str) -> PyResult<Vec<PyRecord>> {
        run(py, self, |e| {
            e.records(namespace)?
                .map(|r| r.map(PyRecord::from))
                .collect()
        })
    }

    /// The `k` best records by BM25 over their text; `filter` keeps records whose attributes
    /// equal every given value.
    #[pyo3(signature = (namespace, query, k=10, *, filter=None))]
    fn search_text(
        &self,
        py: Python<'_>,
        namespace: &str,
        query: &str,
        k: usize,
        filter: Option<BTreeMap<String, String>>,
    ) -> PyResult<Vec<PyHit>> {
        let filter = crate::records::filter(filter);
        let found = run(py, self, |e| {
            e.search_text_filtered(namespace, query, k, &filter)
        })?;
        hits(py, found)
    }

    /// The `k` records whose vector in `space` is most similar (cosine) to `vector`.
    #[pyo3(signature = (namespace, space, vector, k=10, *, filter=None))]
    fn search_vector(
        &self,
        py: Python<'_>,
        namespace: &str,
        space: &str,
        vector: Vec<f32>,
        k: usize,
        filter: Option<BTreeMap<String, String>>,
    ) -> PyResult<Vec<PyHit>> {
        let filter = crate::records::filter(filter);
        let found = run(py, self, |e| {
            e.search_vector_filtered(namespace, space, &vector, k, &filter)
        })?;
        hits(py, found)
    }

    /// BM25 over `text` and cosine to `vector` fused by reciprocal rank fusion.
    #[pyo3(signature = (namespace, text, space, vector, k=10, *, filter=None, candidates=None, rrf_k=60.0))]
    #[allow(clippy::too_many_arguments)]
    fn search_hybrid(
        &self,
        py: Python<'_>,
        namespace: &str,
        text: &str,
        space: &str,
        vector: Vec<f32>,
        k: usize,
        filter: Option<BTreeMap<String, String>>,
        candidates: Option<usize>,
        rrf_k: f32,
    ) -> PyResult<Vec<PyHit>> {
        let filter = crate::records::filter(filter);
        let mut query = HybridQuery::new(text, space, vector, k);
        query.candidates = candidates;
        query.rrf_k = rrf_k;
        let found = run(py, self, |e| {
            e.search_hybrid_filtered(namespace, &query, &filter)
        })?;
        hits(py, found)
    }

    /// Sets a namespace state key to a JSON-serializable value.
    fn put_state(
        &self,
        py: Python<'_>,
        namespace: &str,
        key: &str,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let value = crate::json::to_text(py, value)?;
        run(py, self, |e| e.put_state(namespace, key, &value))
    }

    /// A namespace state value, or None.
    fn get_state<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        key: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let value: Option<String> = run(py, self, |e| e.get_state(namespace, key))?;
        value.map(|v| crate::json::parse(py, &v)).transpose()
    }

    /// Removes a namespace state key.
    fn delete_state(&self, py: Python<'_>, namespace: &str, key: &str) -> PyResult<()> {
        run(py, self, |e| e.delete_state(namespace, key))
    }

    /// The namespace's state keys that start with `prefix` (all by default), sorted: what
    /// key-value stores on the state list and scan by prefix.
    #[pyo3(signature = (namespace, prefix=""))]
    fn state_keys(&self, py: Python<'_>, namespace: &str, prefix: &str) -> PyResult<Vec<String>> {
        run(py, self, |e| e.state_keys(namespace, prefix))
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!("Engine({:?}, {state})", self.path.display().to_string())
    }
}

fn namespace_options(analyzer: &str) -> PyResultOf<NamespaceOptions> {
    let analyzer = match analyzer {
        "standard" => Analyzer::Standard,
        "stemmed" => Analyzer::Stemmed,
        "cjk" => Analyzer::Cjk,
        other => {
            return Err(Raised::new(
                "InvalidInputError",
                format!(
                    "unknown analyzer {other:?}: expected \"standard\", \"stemmed\" or \"cjk\""
                ),
            ))
        }
    };
    Ok(NamespaceOptions::default().with_analyzer(analyzer))
}
