//! Namespaces: the unit of isolation (one per user, run or dataset).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which text analyzer a namespace's lexical index uses. Fixed when the namespace is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Analyzer {
    /// Whoosh `StandardAnalyzer` parity: tokens `\w+(\.?\w+)*`, lowercased, English stop words
    /// and tokens shorter than two characters removed. The MemoryBench default.
    #[default]
    Standard,
    /// Chinese-aware: jieba word segmentation (search mode, which adds the words inside
    /// compounds), then the same lowercasing and stop words; single
    /// CJK characters are kept because they are words.
    Cjk,
}

/// Options for a new namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespaceOptions {
    /// Analyzer for lexical search.
    pub analyzer: Analyzer,
}

/// A namespace as stored in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamespaceInfo {
    /// Name given by the caller.
    pub name: String,
    /// Internal id (never reused, even after a drop).
    pub id: u32,
    /// Analyzer of its lexical index.
    pub analyzer: Analyzer,
}

/// Longest accepted namespace name, in bytes.
pub const MAX_NAMESPACE_NAME: usize = 256;

pub(crate) fn validate_name(name: &str) -> Result<()> {
    let reason = if name.is_empty() {
        "empty"
    } else if name.len() > MAX_NAMESPACE_NAME {
        "longer than 256 bytes"
    } else if name.chars().any(char::is_control) {
        "contains a control character"
    } else {
        return Ok(());
    };
    Err(Error::InvalidNamespaceName {
        name: name.to_string(),
        reason,
    })
}
