//! A run's items: `GET /api/run/items` (its answered cases, with their scores),
//! `GET /api/run/item` (one case: the question, the memories retrieved for it, the whole
//! assembled prompt, the answer, the reference, the metrics with any judge's verdict, and its
//! cost) and `GET /api/run/dialogs` (the training dialogs with their feedback).
//!
//! A run directory (or one step of it) is read as the harness writes it: the predictions of
//! `predict.json` or `test_predicts.json`, else, while the run is live, its resume log; the
//! metrics of `evaluate_details.json`; the retrieved memories and costs of the resume log. The
//! question and the reference come from the set itself, loaded from the data the server
//! reads (never from a path a run directory names).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::Json;
use mb_datasets::catalog::DatasetType;
use mb_datasets::Dataset;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};

use super::reply::{blocking, ApiError, ApiResult};
use super::results::small_json;
use super::Server;
use crate::data::DataArgs;
use crate::run::cases::PARTIAL;

/// Largest run file read (predictions of a large run).
const LARGE_FILE: u64 = 1 << 30;
/// Most items or dialogs per page.
const PAGE: usize = 500;
/// Most directories whose files are kept parsed.
const KEPT: usize = 8;

/// A run directory's cases, parsed.
#[derive(Default)]
struct Index {
    predictions: Vec<Value>,
    /// The resume log's entries by (dataset, test_idx).
    logged: HashMap<(String, u64), Value>,
    /// Metrics by (dataset, test_idx).
    metrics: HashMap<(String, u64), Value>,
}

/// What the item views keep between requests: parsed directories (while their files do not
/// change) and loaded sets.
#[derive(Default)]
pub(crate) struct Cache {
    indexes: Mutex<Vec<Parsed>>,
    sets: Mutex<HashMap<SetName, Arc<Vec<Dataset>>>>,
}

/// The files of an index by their length and time of change (`None`: absent).
type Stamp = Vec<Option<(u64, SystemTime)>>;
/// A directory's index with the stamp of its files when it was parsed.
type Parsed = (PathBuf, Stamp, Arc<Index>);
/// A set by its type and name.
type SetName = (String, String);

/// The files an index reads, in the order tried.
const FILES: [&str; 4] = [
    "predict.json",
    "test_predicts.json",
    PARTIAL,
    "evaluate_details.json",
];

fn key_of(entry: &Value) -> Option<(String, u64)> {
    let entry = entry.get("prediction").unwrap_or(entry);
    Some((
        entry["dataset"].as_str()?.to_string(),
        entry["test_idx"].as_u64()?,
    ))
}

fn read_large(path: &Path) -> Option<String> {
    mb_core::files::read_text(path, LARGE_FILE).ok()
}

impl Cache {
    /// The index of `dir`, parsed again when one of its files changed.
    fn index(&self, dir: &Path) -> Arc<Index> {
        let stamp: Stamp = FILES
            .iter()
            .map(|f| {
                std::fs::metadata(dir.join(f))
                    .ok()
                    .and_then(|m| Some((m.len(), m.modified().ok()?)))
            })
            .collect();
        if let Some((_, _, index)) = self
            .indexes
            .lock()
            .iter()
            .find(|(d, s, _)| d == dir && *s == stamp)
        {
            return index.clone();
        }
        let index = Arc::new(read_index(dir));
        let mut kept = self.indexes.lock();
        kept.retain(|(d, _, _)| d != dir);
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push((dir.to_path_buf(), stamp, index.clone()));
        index
    }

    /// The datasets of the set a run was made on, when the server's data is the run's.
    fn set(&self, server: &Server, config: &Value) -> Option<Arc<Vec<Dataset>>> {
        let recorded = config["data"].as_str().map(PathBuf::from);
        if recorded != server.data || config["longmemeval"].is_object() {
            return None;
        }
        let kind = config["dataset_type"].as_str()?.to_string();
        let name = config["set_name"].as_str()?.to_string();
        let key = (kind.clone(), name.clone());
        if let Some(set) = self.sets.lock().get(&key) {
            return Some(set.clone());
        }
        let data = DataArgs {
            data: server.data.clone(),
        };
        let loaded = data.load_set(None, kind.parse::<DatasetType>().ok()?, &name, None);
        let set = Arc::new(
            loaded
                .map_err(|e| tracing::warn!("serve: loading {name}: {e}"))
                .ok()?,
        );
        self.sets.lock().insert(key, set.clone());
        Some(set)
    }
}

fn read_index(dir: &Path) -> Index {
    let mut index = Index::default();
    let parse =
        |name: &str| -> Option<Value> { serde_json::from_str(&read_large(&dir.join(name))?).ok() };
    let mut log_lines: Vec<Value> = Vec::new();
    if let Some(text) = read_large(&dir.join(PARTIAL)) {
        // A cut-off last line (a run being written) is left out, as a resume leaves it.
        log_lines = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
    }
    index.predictions = match parse("predict.json").or_else(|| parse("test_predicts.json")) {
        Some(Value::Array(predictions)) => predictions,
        _ => log_lines.iter().map(|l| l["prediction"].clone()).collect(),
    };
    for line in log_lines {
        if let Some(key) = key_of(&line) {
            index.logged.insert(key, line);
        }
    }
    if let Some(Value::Array(details)) = parse("evaluate_details.json") {
        for detail in details {
            if let Some(key) = key_of(&detail) {
                index.metrics.insert(key, detail["metrics"].clone());
            }
        }
    }
    index
}

/// An item's score: its first numeric metric.
fn first_score(metrics: Option<&Value>) -> Option<f64> {
    metrics?.as_object()?.values().find_map(Value::as_f64)
}

/// Which run, which step, which page or item.
#[derive(Debug, Deserialize)]
pub(crate) struct ItemQuery {
    run: String,
    #[serde(default)]
    step: Option<String>,
    #[serde(default)]
    offset: usize,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    index: Option<usize>,
}

impl ItemQuery {
    fn dir(&self, server: &Server) -> ApiResult<(PathBuf, PathBuf)> {
        let run = server.runs.run(&self.run)?;
        let dir = server.runs.step(&run, self.step.as_deref())?;
        Ok((run, dir))
    }

    fn page(&self) -> std::ops::Range<usize> {
        let limit = self.limit.unwrap_or(100).clamp(1, PAGE);
        self.offset..self.offset.saturating_add(limit)
    }
}

/// `GET /api/run/items`.
pub(crate) async fn list(
    State(server): State<Arc<Server>>,
    Query(query): Query<ItemQuery>,
) -> ApiResult<Json<Value>> {
    blocking(move || {
        let (_, dir) = query.dir(&server)?;
        let index = server.cache.index(&dir);
        let items: Vec<Value> = index
            .predictions
            .iter()
            .enumerate()
            .skip(query.page().start)
            .take(query.page().len())
            .map(|(i, p)| {
                let key = key_of(p);
                let score = key.as_ref().and_then(|k| first_score(index.metrics.get(k)));
                json!({"index": i, "dataset": p["dataset"], "test_idx": p["test_idx"], "score": score})
            })
            .collect();
        Ok(Json(json!({"items": items, "total": index.predictions.len()})))
    })
    .await
}

/// `GET /api/run/item`.
pub(crate) async fn one(
    State(server): State<Arc<Server>>,
    Query(query): Query<ItemQuery>,
) -> ApiResult<Json<Value>> {
    blocking(move || {
        let (run, dir) = query.dir(&server)?;
        let index = server.cache.index(&dir);
        let position = query
            .index
            .ok_or_else(|| ApiError::bad("which item: index="))?;
        let prediction = index
            .predictions
            .get(position)
            .ok_or_else(|| ApiError::missing("no such item"))?;
        let key = key_of(prediction);
        let logged = key.as_ref().and_then(|k| index.logged.get(k));
        let messages = prediction["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let prompt = messages
            .last()
            .map(|m| m["content"].clone())
            .unwrap_or(Value::Null);
        let (question, reference) = match (&key, small_json(&run.join(mb_eval::RUN_CONFIG))) {
            (Some((dataset, test_idx)), Some(config)) => {
                row_facts(&server, &config, dataset, *test_idx)
            }
            _ => (Value::Null, Value::Null),
        };
        let retrieved = logged
            .and_then(|l| l.get("retrieved"))
            .cloned()
            .unwrap_or(Value::Null);
        Ok(Json(json!({
            "index": position,
            "dataset": prediction["dataset"],
            "test_idx": prediction["test_idx"],
            "question": question,
            "messages": messages,
            "prompt": prompt,
            "retrieved": retrieved,
            "response": prediction["response"],
            "reference": reference,
            "metrics": key.as_ref().and_then(|k| index.metrics.get(k)),
            "timing": logged.map(|l| l["timing"].clone()),
            "failures": logged.map(|l| l["failures"].clone()),
            "fallbacks": logged.map(|l| l["fallbacks"].clone()),
        })))
    })
    .await
}

/// The question asked and the reference of row `test_idx` of `dataset`, from the set.
fn row_facts(server: &Server, config: &Value, dataset: &str, test_idx: u64) -> (Value, Value) {
    let Some(set) = server.cache.set(server, config) else {
        return (Value::Null, Value::Null);
    };
    let row = set
        .iter()
        .filter(|d| d.name() == dataset)
        .flat_map(|d| d.test.iter().chain(d.train.iter()))
        .find(|r| r.test_idx == test_idx);
    let Some(row) = row else {
        return (Value::Null, Value::Null);
    };
    let question = row
        .input
        .initial_messages()
        .last()
        .map_or(Value::Null, |m| Value::String(m.content.clone()));
    (question, Value::Object(row.info.clone()))
}

/// `GET /api/run/dialogs`: the dialogs a step memorized (`training_dialogs.json`) or collected
/// (`train_dialogs.json`, with the simulated user's feedback); for a run without such a file,
/// the training dialogs of its set, with their recorded feedback.
pub(crate) async fn dialogs(
    State(server): State<Arc<Server>>,
    Query(query): Query<ItemQuery>,
) -> ApiResult<Json<Value>> {
    blocking(move || {
        let (run, dir) = query.dir(&server)?;
        let from_file = ["train_dialogs.json", "training_dialogs.json"]
            .iter()
            .find_map(|f| read_large(&dir.join(f)))
            .and_then(|text| serde_json::from_str::<Vec<Value>>(&text).ok());
        let all: Vec<Value> = match from_file {
            Some(dialogs) => dialogs,
            None => set_dialogs(&server, &run),
        };
        let page: Vec<Value> = all
            .iter()
            .skip(query.page().start)
            .take(query.page().len())
            .map(|d| {
                json!({
                    "test_idx": d["test_idx"],
                    "dataset": d["dataset"],
                    "dialog": d["dialog"],
                    "implicit_feedback": d["implicit_feedback"],
                })
            })
            .collect();
        Ok(Json(json!({"dialogs": page, "total": all.len()})))
    })
    .await
}

/// The training dialogs of the set `run` was made on (its `--limit` first rows per dataset).
fn set_dialogs(server: &Server, run: &Path) -> Vec<Value> {
    let Some(config) = small_json(&run.join(mb_eval::RUN_CONFIG)) else {
        return Vec::new();
    };
    let Some(set) = server.cache.set(server, &config) else {
        return Vec::new();
    };
    let limit = config["limit"]
        .as_u64()
        .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    set.iter()
        .flat_map(|d| d.train.iter().take(limit))
        .filter_map(|row| {
            let dialog = row.dialogs.get("")?;
            let messages = serde_json::to_value(&dialog.messages).ok()?;
            let feedback: Vec<Value> = dialog.feedback.iter().map(|f| f.to_value()).collect();
            Some(json!({"test_idx": row.test_idx, "dataset": row.dataset, "dialog": messages, "implicit_feedback": feedback}))
        })
        .collect()
}
