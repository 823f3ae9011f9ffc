//! What can go wrong in SFT: every error names the file, setting or training example at fault.

use std::path::PathBuf;

/// Errors of reading a model, building examples, training and writing an adapter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SftError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A GGUF file lacks a key or tensor the model needs, or holds one of the wrong kind.
    #[error("{}: {reason}", path.display())]
    Gguf {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A run's own file (configuration, log, optimizer state) cannot be read back.
    #[error("{}: {reason}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A setting is out of its range.
    #[error("{field}: {reason}")]
    Setting {
        /// The setting.
        field: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
    /// A training example has no answer token to learn from: training on it would learn
    /// nothing (upstream trains a step whose loss is NaN and skips it).
    #[error("example test_idx {test_idx} has nothing to learn: {reason}")]
    NothingToLearn {
        /// The `test_idx` of the dialog the example comes from.
        test_idx: u64,
        /// Why, for instance an empty answer or a prompt longer than `max_length`.
        reason: String,
    },
    /// There is no example to train on.
    #[error("no training data found: {0}")]
    NoTrainingData(String),
    /// The tokenizer could not be built or could not encode a text.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A tensor operation failed (a shape or dtype the model did not expect).
    #[error("tensor computation: {0}")]
    Tensor(#[from] candle_core::Error),
}

/// The result of SFT operations.
pub type Result<T, E = SftError> = std::result::Result<T, E>;

impl SftError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> SftError {
        SftError::Io {
            path: path.into(),
            source,
        }
    }

    /// A problem with the run's own file `path`.
    pub(crate) fn bad_file(path: impl Into<PathBuf>, reason: impl Into<String>) -> SftError {
        SftError::BadFile {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// A GGUF problem in `path`.
    pub(crate) fn gguf(path: impl Into<PathBuf>, reason: impl Into<String>) -> SftError {
        SftError::Gguf {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
