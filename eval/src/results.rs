//! Result files with upstream's names and fields, so tooling written for MemoryBench's
//! results (`MemoryBenchResults` and the leaderboard scripts) reads ours.
//!
//! A run directory holds `run_config.json` (the run's arguments), `predict.json` (one
//! [`Prediction`] per test row, by dataset in run order then `test_idx`),
//! `evaluate_details.json` ([`EvaluateDetail`]s, same order) and `summary.json`. Files are
//! written to a temporary name and renamed, so a crash never leaves half a file.

use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::evaluate::{EvaluateDetail, Prediction};
use mb_core::atomic_file::write_atomic;

/// `run_config.json`.
pub const RUN_CONFIG: &str = "run_config.json";
/// `predict.json`.
pub const PREDICT: &str = "predict.json";
/// `evaluate_details.json`.
pub const EVALUATE_DETAILS: &str = "evaluate_details.json";
/// `summary.json`.
pub const SUMMARY: &str = "summary.json";

/// A result file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {detail}")]
#[non_exhaustive]
pub struct ResultsError {
    /// The file.
    pub path: String,
    /// What went wrong (with line and column for parse errors).
    pub detail: String,
}

/// One run's directory of result files.
#[derive(Debug, Clone)]
pub struct RunFiles {
    dir: PathBuf,
}

impl RunFiles {
    /// The files of the run directory `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> RunFiles {
        RunFiles { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of one file of the run.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes `predict.json`.
    pub fn write_predictions(&self, predictions: &[Prediction]) -> Result<(), ResultsError> {
        write_json(&self.path(PREDICT), &predictions)
    }

    /// Reads `predict.json`.
    pub fn read_predictions(&self) -> Result<Vec<Prediction>, ResultsError> {
        read_json(&self.path(PREDICT))
    }

    /// Writes `evaluate_details.json`.
    pub fn write_details(&self, details: &[EvaluateDetail]) -> Result<(), ResultsError> {
        write_json(&self.path(EVALUATE_DETAILS), &details)
    }

    /// Reads `evaluate_details.json`.
    pub fn read_details(&self) -> Result<Vec<EvaluateDetail>, ResultsError> {
        read_json(&self.path(EVALUATE_DETAILS))
    }

    /// Writes any other file of the run (`run_config.json`, `summary.json`, …).
    pub fn write<T: Serialize + ?Sized>(&self, name: &str, value: &T) -> Result<(), ResultsError> {
        write_json(&self.path(name), value)
    }

    /// Reads any other file of the run.
    pub fn read<T: DeserializeOwned>(&self, name: &str) -> Result<T, ResultsError> {
        read_json(&self.path(name))
    }
}

/// Writes pretty JSON (non-ASCII kept, as upstream's `ensure_ascii=False`) atomically.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), ResultsError> {
    let fail = |detail: String| ResultsError {
        path: path.display().to_string(),
        detail,
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| fail(e.to_string()))?;
    }
    let text = serde_json::to_string_pretty(value).map_err(|e| fail(e.to_string()))?;
    write_atomic(path, text.as_bytes()).map_err(|e| fail(e.to_string()))
}

/// Reads a JSON file into `T`, naming the file (and line) on failure.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ResultsError> {
    let fail = |detail: String| ResultsError {
        path: path.display().to_string(),
        detail,
    };
    let text = mb_core::files::read_text(path, mb_core::files::DATASET_LIMIT)
        .map_err(|e| fail(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_with_upstream_field_names() {
        let dir = tempfile::tempdir().unwrap();
        let files = RunFiles::new(dir.path().join("run"));
        let predictions = vec![Prediction {
            test_idx: 3,
            messages: vec![json!({"role": "user", "content": "问题"})],
            response: "答案".into(),
            dataset: "LexEval-QA".into(),
        }];
        files.write_predictions(&predictions).unwrap();
        assert_eq!(files.read_predictions().unwrap(), predictions);
        let stored: serde_json::Value = files.read(PREDICT).unwrap();
        assert_eq!(
            stored,
            json!([{"test_idx": 3, "messages": [{"role": "user", "content": "问题"}], "response": "答案", "dataset": "LexEval-QA"}])
        );
        assert!(fs::read_to_string(files.path(PREDICT))
            .unwrap()
            .contains("答案"));
        assert!(!files.path("predict.json.partial").exists());

        fs::write(
            files.path(EVALUATE_DETAILS),
            "[{\"test_idx\": 1,\n \"metrics\": 5}]",
        )
        .unwrap();
        let error = files.read_details().unwrap_err().to_string();
        assert!(
            error.contains(EVALUATE_DETAILS) && error.contains("line 2"),
            "{error}"
        );
    }
}
