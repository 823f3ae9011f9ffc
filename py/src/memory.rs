//! `memorybench.Memory`: any memory system of the registry (the hybrid best-mode memory by
//! default, Mem0, MemoryOS, the BM25 and embedding baselines) on an open engine, driven from
//! Python: add dialogs or dated conversations, search, and for Mem0 read the history.

use std::sync::{Arc, RwLock};

use mb_baselines::mem0::Mem0;
use mb_baselines::{MemoryContext, MemorySystem, Retrieved, TrainingDialog};
use mb_core::Lang;
use mb_datasets::corpus::{Conversation, Session, Turn};
use mb_datasets::dataset::CorpusFormat;
use mb_datasets::row::DialogMessage;
use mb_llm::LocalServer;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokio::runtime::Runtime;

use crate::embedder::{self, PyEmbedder};
use crate::engine::PyEngine;
use crate::errors::{PyResultOf, Raised};
use crate::models::{open_models, PackagedLocal};
use crate::runtime::runtime;

/// State key numbering the dialogs added from Python, so each gets its own unit ids.
const NEXT_DIALOG: &str = "python/next_dialog";

/// A memory system over a namespace of an engine.
#[pyclass(frozen, name = "Memory", module = "memorybench._native")]
pub struct PyMemory {
    slot: RwLock<Option<Arc<Opened>>>,
    system: String,
}

/// What an open memory holds: the system, and the model server it started (if any), which
/// stops when the memory is closed.
struct Opened {
    system: Box<dyn MemorySystem>,
    /// A second handle on the same Mem0 memory (it keeps everything in the engine), for the
    /// history only Mem0 has; `system` does the memorizing and retrieving.
    mem0: Option<Mem0>,
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
        work: impl FnOnce(&Opened, &Runtime) -> Result<T, mb_baselines::MemoryError> + Send,
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
            let mem0 = match spec.name {
                "mem0" => Some(Mem0::new(context.clone())?),
                _ => None,
            };
            Ok(Opened {
                system: spec.build(context)?,
                mem0,
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

    /// Memorizes one dialog: a list of `{"role": "user"|"assistant"|"system", "content": str}`.
    /// Returns Mem0's history events this dialog caused (other systems keep no history: []).
    fn add<'py>(
        &self,
        py: Python<'py>,
        messages: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let messages = dialog_messages(py, messages)?;
        let events = self.run(py, |opened, runtime| {
            let context = opened.system.context();
            let before = match &opened.mem0 {
                Some(mem0) => mem0.history()?.len(),
                None => 0,
            };
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
            };
            runtime.block_on(opened.system.memorize_dialog(dialog))?;
            match &opened.mem0 {
                Some(mem0) => Ok(mem0.history()?.split_off(before)),
                None => Ok(Vec::new()),
            }
        })?;
        events
            .iter()
            .map(|event| history_event(py, event))
            .collect()
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
    /// `retrieve_k`).
    #[pyo3(signature = (query, k=None))]
    fn search(&self, py: Python<'_>, query: String, k: Option<usize>) -> PyResult<Vec<Found>> {
        let found = self.run(py, |opened, runtime| {
            let context = opened.system.context();
            let k = k.unwrap_or(context.settings.retrieve_k());
            runtime.block_on(opened.system.retrieve(&query, context.lang, k))
        })?;
        Ok(found.into_iter().map(Found::from).collect())
    }

    /// Mem0's log of memory changes (ADD, UPDATE, DELETE) in order; other systems raise.
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let events = self.run(py, |opened, _| match &opened.mem0 {
            Some(mem0) => mem0.history(),
            None => Err(mb_baselines::MemoryError::Config(format!(
                "{} keeps no history (only mem0 does)",
                opened.system.context().namespace
            ))),
        })?;
        events
            .iter()
            .map(|event| history_event(py, event))
            .collect()
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

/// One retrieved memory unit.
#[pyclass(frozen, get_all, name = "Found", module = "memorybench._native")]
pub struct Found {
    /// The unit's id in its memory.
    pub doc_id: String,
    /// Retrieval score (higher is better).
    pub score: f32,
    /// The text put into a prompt.
    pub text: String,
    /// The conversation turns (dia ids) it covers, when known.
    pub turns: Vec<String>,
}

#[pymethods]
impl Found {
    fn __repr__(&self) -> String {
        format!(
            "Found(doc_id={:?}, score={:.4}, text={:?})",
            self.doc_id, self.score, self.text
        )
    }
}

impl From<Retrieved> for Found {
    fn from(found: Retrieved) -> Found {
        Found {
            doc_id: found.doc_id,
            score: found.score,
            text: found.text,
            turns: found.turns,
        }
    }
}

/// A session of `add_conversation`.
#[derive(FromPyObject)]
pub struct SessionArg {
    #[pyo3(item)]
    date: String,
    #[pyo3(item)]
    turns: Vec<(String, String)>,
}

fn conversation(sessions: Vec<SessionArg>, speakers: Option<(String, String)>) -> Conversation {
    let (speaker_a, speaker_b) = match speakers {
        Some((a, b)) => (Some(a), Some(b)),
        None => (None, None),
    };
    Conversation {
        speaker_a,
        speaker_b,
        sessions: sessions
            .into_iter()
            .enumerate()
            .map(|(s, session)| Session {
                date_time: session.date,
                turns: session
                    .turns
                    .into_iter()
                    .enumerate()
                    .map(|(t, (speaker, text))| Turn {
                        speaker,
                        dia_id: format!("D{}:{}", s + 1, t + 1),
                        text,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Python's messages as dialog messages; a malformed one raises naming its index and field.
fn dialog_messages(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<Vec<DialogMessage>> {
    let value = crate::json::to_value(py, messages)?;
    let serde_json::Value::Array(items) = value else {
        return Err(Raised::new("InvalidInputError", "messages must be a list of dicts").into());
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value(item).map_err(|e| {
                Raised::new(
                    "InvalidInputError",
                    format!("messages[{i}]: {e} (expected {{\"role\": ..., \"content\": ...}})"),
                )
                .into()
            })
        })
        .collect()
}

fn history_event<'py>(
    py: Python<'py>,
    event: &mb_baselines::mem0::HistoryEvent,
) -> PyResult<Bound<'py, PyDict>> {
    let value = serde_json::to_value(event)
        .map_err(|e| Raised::new("MemoryBenchError", format!("history event: {e}")))?;
    Ok(crate::json::to_python(py, &value)?.cast_into::<PyDict>()?)
}

fn parse_lang(lang: &str) -> PyResultOf<Lang> {
    match lang {
        "en" => Ok(Lang::En),
        "zh" => Ok(Lang::Zh),
        other => Err(Raised::new(
            "InvalidInputError",
            format!("unknown lang {other:?}: expected \"en\" or \"zh\""),
        )),
    }
}
