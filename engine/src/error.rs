//! The engine's error type.
//!
//! Every fallible engine call returns [`Result`]. Variants name the namespace, space, record or path
//! involved so that a caller can print one readable line and a program can match on the cause.

use std::path::PathBuf;

/// Result alias used throughout the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The directory exists but was not created by this engine.
    #[error("{}: not a memory-engine directory ({reason})", path.display())]
    NotAnEngine {
        /// The directory that was opened.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// The directory was written by an engine with another on-disk format.
    #[error("{}: written with engine format {found}, this build reads format {expected}", path.display())]
    IncompatibleFormat {
        /// The directory that was opened.
        path: PathBuf,
        /// Format version found on disk.
        found: u32,
        /// Format version this build understands.
        expected: u32,
    },
    /// Another process has the directory open: one process writes a store at a time.
    #[error("{}: in use by another process{}; wait for it to end or use another directory", path.display(), holder.map(|pid| format!(" (pid {pid})")).unwrap_or_default())]
    InUse {
        /// The directory that was opened.
        path: PathBuf,
        /// The process holding it, when it recorded itself.
        holder: Option<u32>,
    },
    /// The directory does not exist and `create_if_missing` is off.
    #[error("{}: no engine directory here (create_if_missing is off)", path.display())]
    Missing {
        /// The directory that was opened.
        path: PathBuf,
    },
    /// A path the storage layer cannot use (RocksDB only takes UTF-8 paths).
    #[error("{}: engine paths must be valid UTF-8", path.display())]
    NonUtf8Path {
        /// The rejected path.
        path: PathBuf,
    },
    /// A namespace name that was never created (or was dropped).
    #[error("unknown namespace {0:?}")]
    UnknownNamespace(String),
    /// `create_namespace` on a name that already exists.
    #[error("namespace {0:?} already exists")]
    NamespaceExists(String),
    /// A namespace name that cannot be used.
    #[error("invalid namespace name {name:?}: {reason}")]
    InvalidNamespaceName {
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A space declaration that cannot be used.
    #[error("invalid embedding space {space:?}: {reason}")]
    InvalidSpace {
        /// The rejected name.
        space: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// An embedding space that was never created.
    #[error("unknown embedding space {0:?}")]
    UnknownSpace(String),
    /// A space re-declared with a different dimension.
    #[error(
        "embedding space {space:?} has dimension {existing}, cannot redeclare it with {requested}"
    )]
    SpaceConflict {
        /// Space name.
        space: String,
        /// Dimension on record.
        existing: usize,
        /// Dimension asked for.
        requested: usize,
    },
    /// A vector whose length differs from its space's dimension.
    #[error("vector for space {space:?} has dimension {got}, expected {expected}")]
    DimensionMismatch {
        /// Space name.
        space: String,
        /// The space's dimension.
        expected: usize,
        /// The vector's length.
        got: usize,
    },
    /// A vector with NaN or infinite components.
    #[error("vector for space {space:?} has a non-finite component at index {index}")]
    NonFiniteVector {
        /// Space name.
        space: String,
        /// First offending index.
        index: usize,
    },
    /// A search parameter that cannot rank anything (a fusion constant that is not a finite
    /// number at least 0).
    #[error("invalid search: {field} = {value}: {reason}")]
    InvalidQuery {
        /// The parameter.
        field: &'static str,
        /// Its value, as given.
        value: String,
        /// What it must be.
        reason: &'static str,
    },
    /// A record with neither text nor vectors: nothing to store or find.
    #[error("record has blank text and no vector: nothing could ever find it")]
    EmptyRecord,
    /// A record text above [`crate::EngineOptions::max_text_bytes`].
    #[error("record text is {len} bytes, above the limit of {max} bytes")]
    TextTooLarge {
        /// Size of the text.
        len: usize,
        /// Configured limit.
        max: usize,
    },
    /// A record id that does not exist in the namespace.
    #[error("record {id} not found in namespace {namespace:?}")]
    RecordNotFound {
        /// Namespace searched.
        namespace: String,
        /// The missing record id.
        id: u64,
    },
    /// An entry of a namespace import that cannot be stored; nothing of the import is kept.
    #[error("import entry {entry}: {reason}")]
    InvalidImport {
        /// The entry's position in the import, from 1 (the namespace header).
        entry: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The caller's sink of a namespace export failed (a full disk, a closed pipe).
    #[error("writing the export: {0}")]
    ExportSink(std::io::Error),
    /// Stored bytes that do not decode as the expected structure.
    #[error("corrupt {what}: {detail}")]
    Corrupt {
        /// Which structure failed to decode.
        what: &'static str,
        /// Decoder message.
        detail: String,
    },
    /// A value serialized by a different version of a structure.
    #[error("{what} is stored in format version {found}, this build reads version {expected}")]
    FormatVersion {
        /// Which structure.
        what: &'static str,
        /// Tag found.
        found: u8,
        /// Tag expected.
        expected: u8,
    },
    /// A user value (namespace state) that could not be serialized.
    #[error("cannot encode {what}: {detail}")]
    Encode {
        /// Which structure.
        what: &'static str,
        /// Encoder message.
        detail: String,
    },
    /// A store file failed its checksum or does not decode: the store is damaged.
    #[error(
        "the store is damaged ({detail}); the lexical index and HNSW graphs rebuild from the \
         store, but a damaged store file does not: restore the directory from a backup, or \
         use another directory (a new --store)"
    )]
    Damaged {
        /// RocksDB's report, naming the file.
        detail: String,
    },
    /// A write failed because the disk of the store is full, or was until moments ago: nothing
    /// of the write was stored. Writes resume by themselves once [`crate::RESUME_HEADROOM`]
    /// bytes are free; reads go on.
    #[error(
        "{}: out of disk space ({available} bytes free now); nothing of this write was stored. \
         Writes resume by themselves within seconds of {} MiB being free; reads keep working",
        path.display(),
        crate::RESUME_HEADROOM >> 20
    )]
    StorageFull {
        /// The store's directory.
        path: PathBuf,
        /// The bytes free when the write failed.
        available: u64,
    },
    /// RocksDB failed.
    #[error("storage: {0}")]
    Storage(rocksdb::Error),
    /// tantivy failed.
    #[error("lexical index: {0}")]
    Lexical(tantivy::TantivyError),
    /// A file of the lexical index was damaged or removed while the store was open. The index
    /// is derived: the next open checks it and rebuilds it from the store.
    #[error(
        "the lexical index is damaged ({detail}); nothing stored is lost: reopen the store \
         (restart the program) and the index is rebuilt from the records"
    )]
    LexicalDamaged {
        /// tantivy's report.
        detail: String,
    },
    /// A file-system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// Path involved.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A background thread of the engine died.
    #[error("engine background task failed: {0}")]
    Background(String),
}

impl From<rocksdb::Error> for Error {
    /// Classified by RocksDB's status code: a corruption is [`Error::Damaged`].
    fn from(error: rocksdb::Error) -> Self {
        match error.kind() {
            rocksdb::ErrorKind::Corruption => Error::Damaged {
                detail: error.into_string(),
            },
            _ => Error::Storage(error),
        }
    }
}

impl From<tantivy::TantivyError> for Error {
    /// Classified by tantivy's error kind: damaged index data is [`Error::LexicalDamaged`].
    fn from(error: tantivy::TantivyError) -> Self {
        match error {
            tantivy::TantivyError::DataCorruption(corruption) => Error::LexicalDamaged {
                detail: format!("{corruption:?}"),
            },
            other => Error::Lexical(other),
        }
    }
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_lexical_data_says_how_to_rebuild_the_index() {
        let corruption = tantivy::error::DataCorruption::comment_only("positions");
        let error = Error::from(tantivy::TantivyError::DataCorruption(corruption));
        assert!(matches!(error, Error::LexicalDamaged { .. }), "{error:?}");
        assert!(
            error.to_string().contains("rebuilt from the records"),
            "{error}"
        );
        let other = Error::from(tantivy::TantivyError::InvalidArgument("x".into()));
        assert!(matches!(other, Error::Lexical(_)), "{other:?}");
    }
}
