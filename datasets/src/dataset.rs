//! Loaded datasets: typed, checked rows of both splits plus the corpus, as upstream's
//! `load_memory_bench` returns them.

use std::collections::HashMap;

use serde_json::Value;

use crate::catalog::{Catalog, DatasetConfig, DatasetType};
use crate::corpus::{locomo_conversation, parse_dialsim, Conversation};
use crate::error::DataError;
use crate::import::convert_golden_answer;
use crate::row::Row;
use crate::source::DataSource;
use crate::split::SplitName;

/// How a corpus dataset's corpus is stored and cut into memory documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusFormat {
    /// LoCoMo JSON (`Locomo-*`, and the sample conversation).
    Locomo,
    /// DialSim transcripts (`DialSim-*`).
    DialSim,
}

impl CorpusFormat {
    /// The format of a dataset's corpus, from its name as upstream decides (names containing
    /// `Locomo` or `DialSim`), or `None` for datasets without one.
    pub fn of(dataset: &str) -> Option<CorpusFormat> {
        if dataset.contains("Locomo") {
            Some(CorpusFormat::Locomo)
        } else if dataset.contains("DialSim") {
            Some(CorpusFormat::DialSim)
        } else {
            None
        }
    }
}

/// One loaded dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Its configuration.
    pub config: DatasetConfig,
    /// Training rows, in stored order.
    pub train: Vec<Row>,
    /// Test rows, in stored order.
    pub test: Vec<Row>,
    /// The conversation corpus, for corpus datasets.
    pub corpus: Option<Conversation>,
    by_idx: HashMap<u64, (SplitName, usize)>,
}

impl Dataset {
    /// The dataset's name.
    pub fn name(&self) -> &str {
        &self.config.dataset_name
    }

    /// A row by `test_idx`, from either split.
    pub fn row(&self, test_idx: u64) -> Option<(SplitName, &Row)> {
        let &(split, position) = self.by_idx.get(&test_idx)?;
        let rows = match split {
            SplitName::Train => &self.train,
            SplitName::Test => &self.test,
        };
        rows.get(position).map(|row| (split, row))
    }

    /// The rows of one split.
    pub fn rows(&self, split: SplitName) -> &[Row] {
        match split {
            SplitName::Train => &self.train,
            SplitName::Test => &self.test,
        }
    }

    /// Keeps the first `n` rows of each split (as stored), to size a run; a corpus is kept
    /// whole.
    pub fn keep_first(&mut self, n: usize) {
        self.train.truncate(n);
        self.test.truncate(n);
        self.by_idx.retain(|_, &mut (_, position)| position < n);
    }

    /// How its corpus is stored, when it has one.
    pub fn corpus_format(&self) -> Option<CorpusFormat> {
        CorpusFormat::of(self.name())
    }
}

/// Loads the datasets of a run (one dataset, a domain or a task) in upstream's order.
pub fn load(
    source: &dyn DataSource,
    catalog: &Catalog,
    kind: DatasetType,
    name: &str,
) -> Result<Vec<Dataset>, DataError> {
    catalog
        .resolve(kind, name)?
        .into_iter()
        .map(|config| load_dataset(source, config))
        .collect()
}

/// Loads one dataset: both splits typed and checked, and its corpus.
pub fn load_dataset(source: &dyn DataSource, config: DatasetConfig) -> Result<Dataset, DataError> {
    let name = config.dataset_name.clone();
    let mut by_idx = HashMap::new();
    let mut typed = |split: SplitName| -> Result<Vec<Row>, DataError> {
        let mut rows = Vec::new();
        for (position, raw) in source.split(&name, split)?.into_iter().enumerate() {
            let test_idx = raw.get("test_idx").and_then(Value::as_u64);
            let mut row = Row::from_columns(raw).map_err(|source| DataError::Row {
                dataset: name.clone(),
                split,
                row: position,
                test_idx,
                source,
            })?;
            // Upstream's loader turns LoCoMo golden answers into text (by the row's dataset name).
            if row.dataset.contains("Locomo") {
                convert_golden_answer(&mut row.info);
            }
            if let Some(&(first, _)) = by_idx.get(&row.test_idx) {
                return Err(DataError::DuplicateTestIdx {
                    dataset: name.clone(),
                    test_idx: row.test_idx,
                    first,
                    second: split,
                    row: position,
                });
            }
            by_idx.insert(row.test_idx, (split, position));
            rows.push(row);
        }
        Ok(rows)
    };
    let train = typed(SplitName::Train)?;
    let test = typed(SplitName::Test)?;
    let corpus = match CorpusFormat::of(&name) {
        None => None,
        Some(format) => {
            let text = source
                .corpus_text(&name)?
                .ok_or_else(|| DataError::MissingCorpus {
                    dataset: name.clone(),
                    source_name: source.describe(),
                })?;
            Some(parse_corpus(&name, format, &text)?)
        }
    };
    Ok(Dataset {
        config,
        train,
        test,
        corpus,
        by_idx,
    })
}

/// A corpus text as a conversation: LoCoMo's is the JSON of one raw sample (its
/// `conversation` object is used), DialSim's the raw transcript.
pub fn parse_corpus(
    dataset: &str,
    format: CorpusFormat,
    text: &str,
) -> Result<Conversation, DataError> {
    let fail = |detail: String| DataError::Corpus {
        dataset: dataset.to_string(),
        detail,
    };
    match format {
        CorpusFormat::DialSim => Ok(parse_dialsim(text)),
        CorpusFormat::Locomo => {
            let sample: Value =
                serde_json::from_str(text).map_err(|e| fail(format!("not JSON: {e}")))?;
            let conversation = sample
                .get("conversation")
                .ok_or_else(|| fail("no conversation object".into()))?;
            locomo_conversation(conversation).map_err(|e| fail(e.to_string()))
        }
    }
}
