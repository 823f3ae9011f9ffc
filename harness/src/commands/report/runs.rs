//! Finding and reading the runs a report compares: every directory under the given ones that
//! holds a `summary.json`, with a `run_config.json` in it or (for a step of a stepwise or
//! on-policy run) in its parent. Besides its numbers, each run is given what makes it
//! comparable with others (its [`GroupKey`]), including how many cases it answered, counted
//! from its own predictions.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use mb_eval::read_json;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::key::GroupKey;
use crate::error::HarnessError;
use crate::run::cost::DialogCost;

/// One run's numbers (or one step's, for stepwise and on-policy runs).
#[derive(Debug, Clone)]
pub(super) struct RunRow {
    /// What the run must share with another to be charted beside it; its memory embedder is
    /// the run's own (`None` for a system without one).
    pub key: GroupKey,
    /// The step (`begin`, `[0,100)`, `step_3`), for a step of a run.
    pub step: Option<String>,
    /// The run directory (a step's parent).
    pub run_dir: PathBuf,
    /// The memory system (or `sft epoch N`).
    pub system: String,
    /// The directory holding the summary (the step's own, for a step).
    pub dir: PathBuf,
    /// The run's headline score, if its summary has one.
    pub score: Option<f64>,
    /// Memory processing seconds per case.
    pub memory_seconds: f64,
    /// Prediction seconds per case.
    pub prediction_seconds: f64,
    /// LLM operations per case.
    pub llm_calls: f64,
    /// Model tokens per case.
    pub tokens: f64,
    /// Fallbacks of the run, memory processing and prediction.
    pub fallbacks: f64,
    /// Seconds each training dialog took to memorize, in order (`memorization.json`).
    pub dialog_seconds: Vec<f64>,
}

/// The regimes, as the first directory of their results (`runs/<regime>/…`).
const REGIMES: [&str; 5] = [
    "off-policy",
    "step_off-policy",
    "on-policy",
    "train_performance",
    "action_feedback",
];

/// The files a run's answered cases are counted from, the first present winning: an
/// off-policy run's predictions, a step's, and the evaluated details every run has.
const CASE_FILES: [&str; 3] = [
    "predict.json",
    "test_predicts.json",
    "evaluate_details.json",
];

/// Every run under `dirs`, each directory read once.
pub(super) fn collect_all(dirs: &[PathBuf]) -> Result<Vec<RunRow>, HarnessError> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for dir in dirs {
        collect(dir, &mut seen, &mut found)?;
    }
    Ok(found)
}

/// Finds runs under `dir`, following symbolic links to directories once each (a link loop
/// ends where it returns to a directory already seen).
fn collect(
    dir: &Path,
    seen: &mut HashSet<PathBuf>,
    found: &mut Vec<RunRow>,
) -> Result<(), HarnessError> {
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !seen.insert(real) {
        return Ok(());
    }
    let summary = dir.join("summary.json");
    if summary.is_file() {
        if let Some(row) = read_run(dir)? {
            found.push(row);
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut subdirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    // The same page whatever order the file system lists them in.
    subdirs.sort();
    for path in subdirs {
        collect(&path, seen, found)?;
    }
    Ok(())
}

/// A run directory's row; `None` when it has no run configuration (not ours).
pub(super) fn read_run(dir: &Path) -> Result<Option<RunRow>, HarnessError> {
    let config_dir = [dir, dir.parent().unwrap_or(dir)]
        .into_iter()
        .find(|d| d.join("run_config.json").is_file());
    let Some(config_dir) = config_dir else {
        return Ok(None);
    };
    let config: Value = read_json(&config_dir.join("run_config.json"))?;
    let summary: Value = read_json(&dir.join("summary.json"))?;
    let regime = dir
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .find(|c| REGIMES.contains(c))
        .unwrap_or("off-policy");
    // An action-feedback run is told apart by its action.
    let regime = match config["action_feedback"].as_str() {
        Some(action) => format!("{regime} {action}"),
        None => regime.to_string(),
    };
    let step = (config_dir != dir).then(|| {
        dir.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()
    });
    let text = |key: &str| config[key].as_str().unwrap_or("?").to_string();
    let score = summary["summary"]["average"].as_f64().or_else(|| {
        summary["summary"]
            .as_object()
            .and_then(|m| m.values().next())
            .and_then(Value::as_f64)
    });
    let timing = &summary["timing"];
    let key = GroupKey {
        regime,
        set: format!("{}/{}", text("dataset_type"), text("set_name")),
        llm: recorded(&config["llm"]),
        cases: count_cases(dir),
        limit: recorded(&config["limit"]),
        retrieve_k: recorded(&config["retrieve_k"]),
        // Runs from before the wording was recorded in the configuration had it in the summary
        // only, and before that had the paraphrase.
        prompts: config["prompts"]
            .as_str()
            .map_or_else(|| crate::run::cases::prompts_of(&summary), str::to_string),
        data: recorded(&config["data"]),
        memory_embedder: recorded(&config["memory_embedder"]),
    };
    Ok(Some(RunRow {
        key,
        step,
        run_dir: config_dir.to_path_buf(),
        // An SFT run answers without memory, with the adapter of an epoch.
        system: match config["sft"]["epoch"].as_u64() {
            Some(epoch) => format!("sft epoch {epoch}"),
            None => text("memory_system"),
        },
        dir: dir.to_path_buf(),
        score,
        memory_seconds: timing["memory_processing_seconds_per_case"]
            .as_f64()
            .unwrap_or(0.0),
        prediction_seconds: timing["prediction_seconds_per_case"]
            .as_f64()
            .unwrap_or(0.0),
        llm_calls: timing["llm_calls_per_case"].as_f64().unwrap_or(0.0),
        tokens: timing["tokens_per_case"].as_f64().unwrap_or(0.0),
        fallbacks: ["memory", "prediction"]
            .iter()
            .filter_map(|part| timing["fallbacks"][part].as_f64())
            .sum(),
        dialog_seconds: dialog_seconds(dir)?,
    }))
}

/// A recorded setting as text, `None` when the run recorded none (null or absent).
fn recorded(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// How many cases the run in `dir` answered: the entries of the first of [`CASE_FILES`] it
/// holds that reads as a list (or as lists per test set); `None` when none does.
pub(super) fn count_cases(dir: &Path) -> Option<usize> {
    CASE_FILES.iter().find_map(|name| {
        let path = dir.join(name);
        if !path.is_file() {
            return None;
        }
        let text = mb_core::files::read_text(&path, mb_core::files::DATASET_LIMIT).ok()?;
        // Counted without keeping the entries: a run's predictions hold whole prompts.
        serde_json::from_str::<Vec<IgnoredAny>>(&text)
            .map(|cases| cases.len())
            .or_else(|_| {
                serde_json::from_str::<BTreeMap<String, Vec<IgnoredAny>>>(&text)
                    .map(|sets| sets.values().map(Vec::len).sum())
            })
            .ok()
    })
}

/// The per-dialog memorization seconds of a run directory, if it lists them.
fn dialog_seconds(dir: &Path) -> Result<Vec<f64>, HarnessError> {
    let path = dir.join(crate::run::training::MEMORIZATION);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let dialogs: Vec<DialogCost> = read_json(&path)?;
    Ok(dialogs.iter().map(|d| d.cost.seconds).collect())
}
