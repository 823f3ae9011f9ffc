//! Python's values in and out of `memorybench.Memory`: dialogs, conversations, metadata and
//! filters in; found memories, records and history events out.

use mb_baselines::curation::{Found as FoundMemory, Metadata, MetadataFilter};
use mb_core::{Lang, Message};
use mb_datasets::corpus::{Conversation, Session, Turn};
use mb_engine::Record;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{PyResultOf, Raised};

/// One retrieved memory unit.
#[pyclass(frozen, get_all, name = "Found", module = "memorybench._native")]
pub struct Found {
    /// The memory's id (its record's), as `get`, `update` and `delete` take it; `None` for a
    /// unit kept outside records (MemoryOS's pages).
    pub id: Option<u64>,
    /// The unit's id in its memory.
    pub doc_id: String,
    /// Retrieval score (higher is better).
    pub score: f32,
    /// The text put into a prompt.
    pub text: String,
    /// The conversation turns (dia ids) it covers, when known.
    pub turns: Vec<String>,
    /// The metadata given when it was added or updated (`{}` when none).
    pub metadata: Py<PyDict>,
}

#[pymethods]
impl Found {
    fn __repr__(&self) -> String {
        let id = self.id.map_or("None".to_string(), |id| id.to_string());
        format!(
            "Found(id={id}, doc_id={:?}, score={:.4}, text={:?})",
            self.doc_id, self.score, self.text
        )
    }
}

impl Found {
    /// A search result as Python sees it.
    pub fn new(py: Python<'_>, found: FoundMemory) -> PyResult<Found> {
        let metadata = found.record.as_ref().map(Metadata::of).unwrap_or_default();
        Ok(Found {
            id: found.record.map(|r| r.id.0),
            doc_id: found.retrieved.doc_id,
            score: found.retrieved.score,
            text: found.retrieved.text,
            turns: found.retrieved.turns,
            metadata: dict(py, serde_json::Value::Object(metadata))?.unbind(),
        })
    }
}

/// A memory's record as a dict: `id`, `text`, `metadata`, `doc_id`, `created_at_ms`.
pub fn record_dict<'py>(py: Python<'py>, record: &Record) -> PyResult<Bound<'py, PyDict>> {
    dict(
        py,
        serde_json::json!({
            "id": record.id.0,
            "text": record.content(),
            "metadata": Metadata::of(record),
            "doc_id": record.attribute("doc_id"),
            "created_at_ms": record.created_at_ms,
        }),
    )
}

/// Python metadata (a dict, or `None`) checked as argument `field`.
pub fn metadata_arg(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    field: &str,
) -> PyResultOf<Option<Metadata>> {
    match value.filter(|v| !v.is_none()) {
        None => Ok(None),
        Some(value) => {
            let json = crate::json::to_exact_value(py, value).map_err(|e| bad(field, e))?;
            Ok(Some(Metadata::new(json, field)?))
        }
    }
}

/// Python filters (a dict, or `None`) compiled as argument `field`.
pub fn filter_arg(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    field: &str,
) -> PyResultOf<Option<MetadataFilter>> {
    match value.filter(|v| !v.is_none()) {
        None => Ok(None),
        Some(value) => {
            let json = crate::json::to_exact_value(py, value).map_err(|e| bad(field, e))?;
            Ok(MetadataFilter::compile(&json, field)?)
        }
    }
}

fn bad(field: &str, error: PyErr) -> Raised {
    Raised::new("InvalidInputError", format!("{field}: {error}"))
}

fn dict(py: Python<'_>, value: serde_json::Value) -> PyResult<Bound<'_, PyDict>> {
    Ok(crate::json::to_python(py, &value)?.cast_into::<PyDict>()?)
}

/// A session of `add_conversation`.
#[derive(FromPyObject)]
pub struct SessionArg {
    #[pyo3(item)]
    date: String,
    #[pyo3(item)]
    turns: Vec<(String, String)>,
}

pub fn conversation(sessions: Vec<SessionArg>, speakers: Option<(String, String)>) -> Conversation {
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
pub fn dialog_messages(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<Vec<Message>> {
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

/// A history event as a dict: `id` (the memory's record id, when known), `memory` (the
/// system's unit id), `event`, `old_memory`, `new_memory`, `at_ms`.
pub fn history_event<'py>(
    py: Python<'py>,
    id: Option<u64>,
    event: &mb_baselines::mem0::HistoryEvent,
) -> PyResult<Bound<'py, PyDict>> {
    let value = serde_json::json!({
        "id": id,
        "memory": event.memory,
        "event": event.event,
        "old_memory": event.old_memory,
        "new_memory": event.new_memory,
        "at_ms": event.at_ms,
    });
    dict(py, value)
}

pub fn parse_lang(lang: &str) -> PyResultOf<Lang> {
    match lang {
        "en" => Ok(Lang::En),
        "zh" => Ok(Lang::Zh),
        other => Err(Raised::new(
            "InvalidInputError",
            format!("unknown lang {other:?}: expected \"en\" or \"zh\""),
        )),
    }
}
