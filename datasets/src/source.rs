//! Where dataset rows come from.
//!
//! A [`DataSource`] hands out the stored rows of a split and the corpus text of a dataset;
//! [`crate::dataset`] types and checks them. [`HfDirectory`] reads a local copy of the Hugging
//! Face `THUIR/MemoryBench` repository (Arrow, Parquet or JSON lines); [`InMemorySource`] holds
//! rows built in the process — by the raw-data importers, or the built-in sample — and can
//! write them out in the Hugging Face layout.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::DataError;
use crate::split::SplitName;
use crate::table::{parse_json_lines, read_table, RawRow, TableFormat};
use mb_core::atomic_file::write_atomic;

/// Environment variable upstream reads for the data location (`MEMORY_BENCH_PATH`).
pub const DATA_ENV: &str = "MEMORY_BENCH_PATH";

/// A place that stores MemoryBench rows.
pub trait DataSource: Send + Sync {
    /// The stored rows of one split, in stored order.
    fn split(&self, dataset: &str, split: SplitName) -> Result<Vec<RawRow>, DataError>;

    /// The corpus text of a corpus dataset (row 0's `text` of `corpus/<name>.jsonl`), or
    /// `Ok(None)` when this source has no corpus for it.
    fn corpus_text(&self, dataset: &str) -> Result<Option<String>, DataError>;

    /// Where the data is, for messages and run configurations.
    fn describe(&self) -> String;
}

/// A local copy of the Hugging Face repository: `dataset/<name>/<split>/*.{arrow,parquet,jsonl}`
/// (or a single `dataset/<name>/<split>.<ext>` file) and `corpus/<name>.jsonl`.
#[derive(Debug, Clone)]
pub struct HfDirectory {
    root: PathBuf,
}

impl HfDirectory {
    /// A source over `root`, which must be a directory.
    pub fn open(root: impl Into<PathBuf>) -> Result<HfDirectory, DataError> {
        let root = root.into();
        if !root.is_dir() {
            return Err(DataError::Source(format!(
                "{}: not a directory (expected a local copy of THUIR/MemoryBench with dataset/ and corpus/)",
                root.display()
            )));
        }
        Ok(HfDirectory { root })
    }

    fn split_files(&self, dataset: &str, split: SplitName) -> Result<Vec<PathBuf>, DataError> {
        let dir = self.root.join("dataset").join(dataset).join(split.as_str());
        if dir.is_dir() {
            let mut files: Vec<PathBuf> = fs::read_dir(&dir)
                .map_err(|e| DataError::Source(format!("{}: {e}", dir.display())))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| TableFormat::of(path).is_some())
                .collect();
            files.sort();
            // One format per split: a directory holding both an Arrow file and its Parquet
            // export must not yield every row twice.
            if let Some(first) = files.first().and_then(|p| TableFormat::of(p)) {
                files.retain(|p| TableFormat::of(p) == Some(first));
            }
            if !files.is_empty() {
                return Ok(files);
            }
        }
        for ext in ["arrow", "parquet", "jsonl"] {
            let file = dir.with_extension(ext);
            if file.is_file() {
                return Ok(vec![file]);
            }
        }
        Err(DataError::MissingSplit {
            dataset: dataset.to_string(),
            split,
            path: dir.display().to_string(),
        })
    }
}

impl DataSource for HfDirectory {
    fn split(&self, dataset: &str, split: SplitName) -> Result<Vec<RawRow>, DataError> {
        let mut rows = Vec::new();
        for file in self.split_files(dataset, split)? {
            rows.extend(read_table(&file).map_err(|source| DataError::Table {
                dataset: dataset.to_string(),
                split,
                source,
            })?);
        }
        Ok(rows)
    }

    fn corpus_text(&self, dataset: &str) -> Result<Option<String>, DataError> {
        let path = self.root.join("corpus").join(format!("{dataset}.jsonl"));
        if !path.is_file() {
            return Ok(None);
        }
        let rows = read_table(&path).map_err(|e| DataError::Corpus {
            dataset: dataset.to_string(),
            detail: e.to_string(),
        })?;
        corpus_from_rows(dataset, &path, &rows).map(Some)
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}

fn corpus_from_rows(dataset: &str, path: &Path, rows: &[RawRow]) -> Result<String, DataError> {
    match rows.first().and_then(|row| row.get("text")) {
        Some(Value::String(text)) => Ok(text.clone()),
        _ => Err(DataError::Corpus {
            dataset: dataset.to_string(),
            detail: format!("{}: row 0 has no text column", path.display()),
        }),
    }
}

/// One dataset's rows held in memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredDataset {
    /// Training rows.
    pub train: Vec<RawRow>,
    /// Test rows.
    pub test: Vec<RawRow>,
    /// Corpus text, for corpus datasets.
    pub corpus: Option<String>,
}

/// Rows built in the process: imported from raw upstream files, or the built-in sample.
#[derive(Debug, Clone, Default)]
pub struct InMemorySource {
    name: String,
    datasets: BTreeMap<String, StoredDataset>,
}

impl InMemorySource {
    /// An empty source; `name` says where its rows came from.
    pub fn new(name: impl Into<String>) -> InMemorySource {
        InMemorySource {
            name: name.into(),
            datasets: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) a dataset.
    pub fn insert(&mut self, dataset: impl Into<String>, stored: StoredDataset) {
        self.datasets.insert(dataset.into(), stored);
    }

    /// Adds a dataset stored as JSON-lines texts (how the built-in sample is embedded).
    pub fn insert_json_lines(
        &mut self,
        dataset: &str,
        train: &str,
        test: &str,
        corpus: Option<&str>,
    ) -> Result<(), DataError> {
        let table = |text: &str, split: SplitName| {
            parse_json_lines(text, &format!("{}/{dataset}/{}", self.name, split.as_str())).map_err(
                |source| DataError::Table {
                    dataset: dataset.to_string(),
                    split,
                    source,
                },
            )
        };
        let corpus = match corpus {
            Some(text) => {
                let rows = parse_json_lines(text, &format!("{}/corpus/{dataset}", self.name))
                    .map_err(|e| DataError::Corpus {
                        dataset: dataset.to_string(),
                        detail: e.to_string(),
                    })?;
                Some(corpus_from_rows(dataset, Path::new(&self.name), &rows)?)
            }
            None => None,
        };
        let stored = StoredDataset {
            train: table(train, SplitName::Train)?,
            test: table(test, SplitName::Test)?,
            corpus,
        };
        self.insert(dataset, stored);
        Ok(())
    }

    /// Names of the datasets held.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.datasets.keys().map(String::as_str)
    }

    /// Writes every dataset in the Hugging Face layout as JSON lines
    /// (`dataset/<name>/{train,test}.jsonl`, `corpus/<name>.jsonl`), readable by
    /// [`HfDirectory`].
    pub fn write_hf_layout(&self, root: &Path) -> Result<(), DataError> {
        let io =
            |path: &Path, e: std::io::Error| DataError::Source(format!("{}: {e}", path.display()));
        for (name, stored) in &self.datasets {
            let dir = root.join("dataset").join(name);
            fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
            for (split, rows) in [
                (SplitName::Train, &stored.train),
                (SplitName::Test, &stored.test),
            ] {
                let path = dir.join(format!("{}.jsonl", split.as_str()));
                write_atomic(&path, json_lines(rows).as_bytes()).map_err(|e| io(&path, e))?;
            }
            if let Some(text) = &stored.corpus {
                let dir = root.join("corpus");
                fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
                let path = dir.join(format!("{name}.jsonl"));
                let row = serde_json::json!({ "text": text });
                write_atomic(&path, format!("{row}\n").as_bytes()).map_err(|e| io(&path, e))?;
            }
        }
        Ok(())
    }
}

/// Rows as JSON lines, one object per line.
pub fn json_lines(rows: &[RawRow]) -> String {
    rows.iter()
        .map(|row| format!("{}\n", Value::Object(row.clone())))
        .collect()
}

impl DataSource for InMemorySource {
    fn split(&self, dataset: &str, split: SplitName) -> Result<Vec<RawRow>, DataError> {
        let stored = self
            .datasets
            .get(dataset)
            .ok_or_else(|| DataError::MissingSplit {
                dataset: dataset.to_string(),
                split,
                path: format!(
                    "{} (has: {})",
                    self.name,
                    self.names().collect::<Vec<_>>().join(", ")
                ),
            })?;
        Ok(match split {
            SplitName::Train => stored.train.clone(),
            SplitName::Test => stored.test.clone(),
        })
    }

    fn corpus_text(&self, dataset: &str) -> Result<Option<String>, DataError> {
        Ok(self.datasets.get(dataset).and_then(|d| d.corpus.clone()))
    }

    fn describe(&self) -> String {
        self.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_split_names_the_variable_data_is_read_from() {
        let missing = InMemorySource::new("the sample").split("Locomo-0", SplitName::Train);
        let message = missing.unwrap_err().to_string();
        assert!(message.contains(&format!("${DATA_ENV}")), "{message}");
        assert!(message.contains("--data DIR"), "{message}");
    }
}
