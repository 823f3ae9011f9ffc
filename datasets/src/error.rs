//! Why a dataset cannot be loaded: one error for every source, naming the dataset and, where it
//! applies, the split, row and field.

use crate::catalog::CatalogError;
use crate::row::FieldError;
use crate::split::SplitName;
use crate::table::TableError;

/// Why data cannot be loaded. Every variant names the dataset and, where it applies, the
/// split, row and field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// The dataset, domain or task is unknown, or the catalog is unreadable.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The data location itself is unusable.
    #[error("{0}")]
    Source(String),
    /// A split has no stored rows at all; the message says where data is read from (the
    /// variable is [`crate::source::DATA_ENV`]).
    #[error(
        "dataset {dataset}: no {split} split at {path}; MemoryBench's data is read from --data \
         DIR or $MEMORY_BENCH_PATH: a local copy of the Hugging Face dataset THUIR/MemoryBench \
         (without either, the built-in sample, which holds only the sets of --set-name Sample)"
    )]
    MissingSplit {
        /// The dataset.
        dataset: String,
        /// The split.
        split: SplitName,
        /// Where it was looked for.
        path: String,
    },
    /// A split's file is unreadable.
    #[error("dataset {dataset}, {split} split: {source}")]
    Table {
        /// The dataset.
        dataset: String,
        /// The split.
        split: SplitName,
        /// The cause.
        source: TableError,
    },
    /// A row has a missing or malformed cell.
    #[error("dataset {dataset}, {split} split, row {row}{}: {source}", test_idx.map(|i| format!(" (test_idx {i})")).unwrap_or_default())]
    Row {
        /// The dataset.
        dataset: String,
        /// The split.
        split: SplitName,
        /// Position of the row in its split (0-based).
        row: usize,
        /// Its `test_idx`, when that could be read.
        test_idx: Option<u64>,
        /// The field and what is wrong with it.
        source: FieldError,
    },
    /// Two rows share a `test_idx`.
    #[error("dataset {dataset}: duplicate test_idx {test_idx} ({first} split and {second} split, row {row})")]
    DuplicateTestIdx {
        /// The dataset.
        dataset: String,
        /// The repeated index.
        test_idx: u64,
        /// Split of the first occurrence.
        first: SplitName,
        /// Split of the second occurrence.
        second: SplitName,
        /// Position of the second occurrence in its split.
        row: usize,
    },
    /// A corpus dataset has no corpus file.
    #[error("dataset {dataset}: missing corpus file corpus/{dataset}.jsonl in {source_name}")]
    MissingCorpus {
        /// The dataset.
        dataset: String,
        /// The data location.
        source_name: String,
    },
    /// A corpus is unreadable.
    #[error("dataset {dataset}, corpus: {detail}")]
    Corpus {
        /// The dataset.
        dataset: String,
        /// What is wrong.
        detail: String,
    },
}
