//! `memorybench.Memory`: any memory system of the registry (the hybrid best-mode memory by
//! default, Mem0, MemoryOS, the BM25 and embedding baselines) on an open engine, driven from
//! Python: add dialogs (with metadata) or dated conversations, search (with mem0's filters),
//! get, list, update and delete memories by their record ids, and for Mem0 read the history.

mod convert;

use std::sync::{Arc, RwLock};

use mb_baselines::curation::{self, RecordIndex};
use mb_baselines::{MemoryContext, MemoryError, MemorySystem, TrainingDialog};
use mb_datasets::dataset::CorpusFormat;
use mb_engine::RecordId;
use mb_llm::LocalServer;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokio::runtime::Runtime;

use crate::embedder::{self, PyEmbedder};
use crate::engine::PyEngine;
use crate::errors::{PyResultOf, Raised};
use crate::models::{open_models, PackagedLocal};
use crate::runtime::runtime;
pub use convert::Found;
use convert::{
    conversation, dialog_messages, filter_arg, history_event, metadata_arg, parse_lang,
    record_dict, SessionArg,
};

/// Most memories one `get_all` page holds.
const MAX_PAGE: usize = 10_000;

/// State key numbering the dialogs added from Python, so each gets its own unit ids.
const NEXT_DIALOG: &str = "python/next_dialog";

/// A memory system over a namespace of an engine.
#[pyclass(frozen, name = "Memory", module = "memorybench._native")]
pub struct PyMemory {
    slot: RwLock<Option<Arc<Opened>>>,
    system: String,
}

/// What an open memory holds: the system, its records by the system's unit ids, and the model
/// server it started (if any), which stops when the memory is closed.
struct Opened {
    system: Box<dyn MemorySystem>,
    index: RecordIndex,
    _server: Option<LocalServer>,
}

impl PyMemory {
    fn opened(&self) -> PyResultOf<Arc<Opened>> {
        let slot = self
            .slot
            .read()
            .map_err(|_| Raised::closed("the memory (poisoned)"))?;
        slot.clone()
            .ok_or_else(|| Raised::closed(&format!("memory {}", self.system)))
    }

    /// Runs `work` on the open system with the GIL released; `work` drives its futures on
    /// the shared runtime it is given.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&Opened, &Runtime) -> Result<T, MemoryError> + Send,
    ) -> PyResult<T> {
        let opened = self.opened()?;
        let runtime = runtime()?;
        py.detach(|| work(&opened, runtime))
            .map_err(|e| Raised::from(e).into())
    }
}

#[pymethods]
impl PyMemory {
    /// Opens memory system `system` (a registry name: "hybrid", "mem0", "memoryos", "a_mem",
    /// "bm25_message", "embedder_message", ...) in `namespace` of `engine`, with its shipped
    /// settings. Systems that embed use `embedder`, else the one their settings name (the
    /// hybrid memory's bge-small-en-v1.5, Mem0's all-MiniLM-L6-v2); `llm` is "offline" (no model:
    /// each operation's deterministic fallback), "local" (the llama.cpp server of
    /// configs/llm/local.toml, started now and stopped by `close()`), a role-settings file, or
    /// the URL of an OpenAI-compatible endpoint with the `model` it serves (one call: Ollama,
    /// vLLM, llama.cpp). An endpoint that accepts no connection fails at once, named.
    /// `date` (YYYY-MM-DD, default today) is the day questions are asked on.
    #[new]
    #[pyo3(signature = (engine, namespace, *, system="hybrid", embedder=None, llm="offline", model=None, date=None, lang="en"))]
    #[allow(clippy::too_many_arguments)]
    fn open(
        py: Python<'_>,
        engine: &PyEngine,
        namespace: String,
        system: &str,
        embedder: Option<&PyEmbedder>,
        llm: &str,
        model: Option<String>,
        date: Option<String>,
        lang: &str,
    ) -> PyResult<Self> {
        let engine = engine.engine()?;
        let lang = parse_lang(lang)?;
        let spec = mb_baselines::registry::get(system).map_err(Raised::from)?;
        let system_settings = spec.settings(None).map_err(Raised::from)?;
        let embedder = match embedder {
            Some(embedder) => Some(embedder.shared()),
            None if spec.needs_embedder => {
                Some(embedder::for_settings(py, system_settings.embedder())?)
            }
            None => None,
        };
        let packaged = PackagedLocal::find(py, llm)?;
        let llm = llm.to_string();
        let opened = py.detach(move || -> Result<Opened, Raised> {
            let models = open_models(&llm, model.as_deref(), None, packaged)?;
            let context = MemoryContext {
                engine,
                namespace,
                llm: Arc::new(models.stack),
                embedder,
                lang,
                settings: system_settings,
                date: date.unwrap_or_else(mb_core::clock::utc_date),
            };
            Ok(Opened {
                system: spec.build(context)?,
                index: RecordIndex::default(),
                _server: models.server,
            })
        })?;
        Ok(PyMemory {
            slot: RwLock::new(Some(Arc::new(opened))),
            system: spec.name.to_string(),
        })
    }

    /// The registry name of the system.
    #[getter]
    fn system(&self) -> &str {
        &self.system
    }

    /// Memorizes one dialog: a list of `{"role": "user"|"assistant"|"system", "content": str}`;
    /// every memory made of it carries `metadata` (a JSON-able dict, at most 16 KiB) for
    /// `search`'s and `get_all`'s `filters`. Returns Mem0's history events this dialog caused
    /// (other systems keep no history: []).
    #[pyo3(signature = (messages, *, metadata=None))]
    fn add<'py>(
        &self,
        py: Python<'py>,
        messages: &Bound<'py, PyAny>,
        metadata: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let messages = dialog_messages(py, messages)?;
        let metadata = metadata_arg(py, metadata, "metadata")?;
        let events = self.run(py, |opened, runtime| {
            let context = opened.system.context();
            let before = opened.system.history_len()?;
            let number: u64 = context
                .engine
                .get_state(&context.namespace, NEXT_DIALOG)?
                .unwrap_or(0);
            context
                .engine
                .put_state(&context.namespace, NEXT_DIALOG, &(number + 1))?;
            let dialog = TrainingDialog {
                test_idx: number,
                dataset: "python",
                lang: context.lang,
                messages: &messages,
                metadata: metadata.as_ref(),
            };
            runtime.block_on(opened.system.memorize_dialog(dialog))?;
            Ok(opened.system.history(before)?.unwrap_or_default())
        })?;
        self.events_with_ids(py, events)
    }

    /// Memorizes a multi-session conversation: `sessions` is a list of
    /// `{"date": "1:56 pm on 8 May, 2023", "turns": [(speaker, text), ...]}`, the first
    /// speaker being `speakers[0]` when given. Returns the ids of the units stored.
    #[pyo3(signature = (sessions, *, speakers=None))]
    fn add_conversation(
        &self,
        py: Python<'_>,
        sessions: Vec<SessionArg>,
        speakers: Option<(String, String)>,
    ) -> PyResult<Vec<String>> {
        let conversation = conversation(sessions, speakers);
        self.run(py, |opened, runtime| {
            let memory = runtime.block_on(
                opened
                    .system
                    .memorize_corpus(&conversation, CorpusFormat::Locomo),
            )?;
            Ok(memory.doc_ids())
        })
    }

    /// The memories most relevant to `query`, best first (`k` defaults to the system's
    /// `retrieve_k`), keeping only those whose metadata match `filters` (mem0's filter
    /// language: `{"key": value}`, `{"key": [a, b]}`, `{"key": {"gte": 3}}`, dates, `AND`,
    /// `OR`, `NOT`).
    #[pyo3(signature = (query, k=None, *, filters=None))]
    fn search(
        &self,
        py: Python<'_>,
        query: String,
        k: Option<usize>,
        filters: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Found>> {
        let filter = filter_arg(py, filters, "filters")?;
        let found = self.run(py, |opened, runtime| {
            let context = opened.system.context();
            let k = k.unwrap_or(context.settings.retrieve_k());
            mb_baselines::check_retrieve_k(k)
                .map_err(|e| MemoryError::BadInput(format!("k: {e}")))?;
            runtime.block_on(curation::search(
                &*opened.system,
                &opened.index,
                &query,
                context.lang,
                k,
                filter.as_ref(),
            ))
        })?;
        found.into_iter().map(|f| Found::new(py, f)).collect()
    }

    /// One memory by its id (as `search`, `get_all` and `history` give it): a dict with `id`,
    /// `text`, `metadata`, `doc_id` and `created_at_ms`; `None` when there is none.
    fn get<'py>(&self, py: Python<'py>, id: u64) -> PyResult<Option<Bound<'py, PyDict>>> {
        let record = self.run(py, |opened, _| {
            let context = opened.system.context();
            Ok(context.engine.get(&context.namespace, RecordId(id))?)
        })?;
        record.map(|r| record_dict(py, &r)).transpose()
    }

    /// The memories in the order they were stored, one page at a time: at most `limit`
    /// (1 to 10 000) stored after the memory `after` (the `next` of the previous page), whose
    /// metadata match `filters`. Returns `{"memories": [...], "next": id or None}`.
    #[pyo3(signature = (*, limit=100, after=None, filters=None))]
    fn get_all<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        after: Option<u64>,
        filters: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(Raised::new(
                "InvalidInputError",
                format!("limit: {limit} is out of range 1..={MAX_PAGE}"),
            )
            .into());
        }
        let filter = filter_arg(py, filters, "filters")?;
        let (records, more) = self.run(py, |opened, _| {
            let context = opened.system.context();
            let from = RecordId(after.unwrap_or(0));
            curation::page(
                &context.engine,
                &context.namespace,
                from,
                limit,
                filter.as_ref(),
            )
        })?;
        let out = PyDict::new(py);
        let memories = records
            .iter()
            .map(|r| record_dict(py, r))
            .collect::<PyResult<Vec<_>>>()?;
        out.set_item("memories", memories)?;
        out.set_item("next", records.last().filter(|_| more).map(|r| r.id.0))?;
        Ok(out)
    }

    /// Replaces the text of memory `id` (embedded again when the system embeds), keeping its id
    /// and creation time; `metadata` replaces its metadata (none keeps it). Mem0 logs an
    /// `UPDATE`. Returns the memory as `get` does; raises `RecordNotFoundError` when there is
    /// none.
    #[pyo3(signature = (id, text, *, metadata=None))]
    fn update<'py>(
        &self,
        py: Python<'py>,
        id: u64,
        text: String,
        metadata: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        if text.trim().is_empty() {
            return Err(Raised::new("InvalidInputError", "text: must not be empty").into());
        }
        let metadata = metadata_arg(py, metadata, "metadata")?;
        let record = self.run(py, |opened, runtime| {
            runtime.block_on(curation::update(
                &*opened.system,
                RecordId(id),
                &text,
                metadata.as_ref(),
            ))
        })?;
        match record {
            Some(record) => record_dict(py, &record),
            None => Err(not_found(id).into()),
        }
    }

    /// Deletes memory `id`; False when there was none. Mem0 logs a `DELETE`.
    fn delete(&self, py: Python<'_>, id: u64) -> PyResult<bool> {
        let deleted = self.run(py, |opened, _| {
            curation::delete(&*opened.system, RecordId(id))
        })?;
        Ok(deleted.is_some())
    }

    /// Mem0's log of memory changes (ADD, UPDATE, DELETE) in order, each event with the `id`
    /// of the memory it is about (as `get` takes it); other systems raise.
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let events = self.run(py, |opened, _| {
            opened.system.history(0)?.ok_or_else(|| {
                MemoryError::Config(format!(
                    "{} keeps no history (only mem0 does)",
                    opened.system.context().namespace
                ))
            })
        })?;
        self.events_with_ids(py, events)
    }

    /// Items stored, bytes of text, and model operations spent so far.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.run(py, |opened, _| opened.system.stats())?;
        let dict = PyDict::new(py);
        dict.set_item("items", stats.items)?;
        dict.set_item("text_bytes", stats.text_bytes)?;
        dict.set_item("llm_operations", stats.llm_operations)?;
        Ok(dict)
    }

    /// The model's work so far, as the server reported it: `calls`, `input_tokens`,
    /// `output_tokens`, and `fallbacks` (unusable replies replaced by upstream's fallback, by
    /// role and operation). Offline, every count is 0: no model was called.
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let usage = self.run(py, |opened, _| {
            Ok(opened.system.context().llm.usage_so_far())
        })?;
        let dict = PyDict::new(py);
        dict.set_item("calls", usage.calls)?;
        dict.set_item("input_tokens", usage.input_tokens)?;
        dict.set_item("output_tokens", usage.output_tokens)?;
        dict.set_item("fallbacks", usage.fallbacks)?;
        Ok(dict)
    }

    /// Releases the engine (so it can be closed) and stops a model server this memory started.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self
            .slot
            .write()
            .map_err(|_| Raised::closed("the memory (poisoned)"))?
            .take();
        py.detach(move || drop(taken));
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("Memory(system={:?})", self.system)
    }
}

impl PyMemory {
    /// History events as dicts, each with the record id of its memory: the one the event
    /// names (updates and deletes), else the one its unit id maps to now.
    fn events_with_ids<'py>(
        &self,
        py: Python<'py>,
        events: Vec<mb_baselines::mem0::HistoryEvent>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let ids = self.run(py, |opened, _| {
            let context = opened.system.context();
            opened
                .index
                .history_records(&context.engine, &context.namespace, &events)
        })?;
        events
            .iter()
            .zip(ids)
            .map(|(event, id)| history_event(py, id.map(|id| id.0), event))
            .collect()
    }
}

fn not_found(id: u64) -> Raised {
    Raised::new("RecordNotFoundError", format!("memory {id} not found"))
}
