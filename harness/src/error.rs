//! The crate's error type: why a command failed, printed as one line.

use std::path::Path;

use mb_baselines::MemoryError;

/// Why a command failed; printed as one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] mb_engine::Error),
    /// The embedder failed or is not set up.
    #[error(transparent)]
    Embed(#[from] mb_embed::EmbedError),
    /// The LLM layer failed or is misconfigured.
    #[error(transparent)]
    Llm(#[from] mb_llm::LlmError),
    /// Upstream's wording was asked for (`--upstream`) and cannot be used.
    #[error("upstream prompts: {0}")]
    Upstream(#[from] mb_upstream::UpstreamError),
    /// A memory system failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// Data could not be loaded.
    #[error(transparent)]
    Data(#[from] mb_datasets::DataError),
    /// A raw file could not be imported.
    #[error(transparent)]
    Import(#[from] mb_datasets::import::ImportError),
    /// Predictions could not be evaluated.
    #[error(transparent)]
    Eval(#[from] mb_eval::EvalError),
    /// A summary could not be computed.
    #[error(transparent)]
    Summary(#[from] mb_eval::SummaryError),
    /// A result file could not be read or written.
    #[error(transparent)]
    Results(#[from] mb_eval::ResultsError),
    /// A catalog lookup failed.
    #[error(transparent)]
    Catalog(#[from] mb_datasets::catalog::CatalogError),
    /// The SFT baseline could not train or find its adapter.
    #[error(transparent)]
    Sft(#[from] mb_sft::SftError),
    /// Standard output is closed or full (a closed pipe ends the command quietly).
    #[error("writing the output: {0}")]
    Output(std::io::Error),
    /// The command cannot run as asked.
    #[error("{0}")]
    Usage(String),
    /// One question of a file could not be answered: the file and the question named.
    #[error("{file}: question {question}: {source}")]
    Question {
        /// The file holding the question.
        file: String,
        /// The question's id.
        question: String,
        /// What went wrong.
        source: Box<HarnessError>,
    },
    /// A file could not be read or written.
    #[error("{path}: {detail}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
}

/// A file error naming the path.
pub fn file_error(path: &Path, error: std::io::Error) -> HarnessError {
    HarnessError::File {
        path: path.display().to_string(),
        detail: error.to_string(),
    }
}
