//! Namespaces: the unit of isolation (one per user, run or dataset).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use mb_text::Analyzer;

/// Options for a new namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NamespaceOptions {
    /// Analyzer for lexical search.
    pub analyzer: Analyzer,
}

impl NamespaceOptions {
    /// The same options with lexical search through `analyzer`.
    pub fn with_analyzer(mut self, analyzer: Analyzer) -> NamespaceOptions {
        self.analyzer = analyzer;
        self
    }
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
