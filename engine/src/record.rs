//! Memory records: what callers store and get back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Identifies a record in its namespace. Ids come from one engine-wide counter and increase
/// with insertion, so ordering by id is insertion order; a namespace copy keeps its source's
/// ids (records written to either later get new ones).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
pub struct RecordId(pub u64);

impl std::fmt::Display for RecordId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Engine-assigned id.
    pub id: RecordId,
    /// The text that lexical search indexes.
    pub text: String,
    /// Content returned to the caller when it differs from the indexed text (for example a
    /// whole dialog indexed by its first question). `None` means "the text itself".
    pub body: Option<String>,
    /// Free-form string attributes (speaker, timestamp, external document id, ...).
    pub attributes: BTreeMap<String, String>,
    /// Creation time in milliseconds since the Unix epoch, as given by the writer.
    pub created_at_ms: i64,
    /// Sequence number of the write that last stored this record.
    pub seq: u64,
}

impl Record {
    /// The content to show for this record: `body` if present, the indexed `text` otherwise.
    pub fn content(&self) -> &str {
        self.body.as_deref().unwrap_or(&self.text)
    }

    /// Looks up one attribute.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// A stored record read in place: borrowed text and attributes, for scans that look at every
/// record and keep few (the fields of [`Record`], in its order).
#[derive(Deserialize)]
pub(crate) struct RecordView<'a> {
    pub(crate) id: RecordId,
    pub(crate) text: &'a str,
    #[serde(borrow)]
    _body: Option<&'a str>,
    #[serde(borrow)]
    pub(crate) attributes: BTreeMap<&'a str, &'a str>,
    _created_at_ms: i64,
    _seq: u64,
}

/// A record to be written: text, optional body and attributes, and embeddings by space name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewRecord {
    /// Text indexed for lexical search.
    pub text: String,
    /// Optional content returned instead of `text`.
    pub body: Option<String>,
    /// Free-form attributes.
    pub attributes: BTreeMap<String, String>,
    /// Creation time; `None` uses the current clock.
    pub created_at_ms: Option<i64>,
    /// Embeddings, one per embedding space name.
    pub vectors: Vec<(String, Vec<f32>)>,
}

impl NewRecord {
    /// A record with this text and nothing else.
    pub fn new(text: impl Into<String>) -> Self {
        NewRecord {
            text: text.into(),
            ..NewRecord::default()
        }
    }

    /// Sets the body returned instead of the indexed text.
    pub fn with_body(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Adds an attribute.
    pub fn with_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.attributes.insert(key.into(), value.into());
        self
    }

    /// Sets the creation time (milliseconds since the Unix epoch).
    pub fn with_created_at_ms(mut self, ms: i64) -> Self {
        self.created_at_ms = Some(ms);
        self
    }

    /// Attaches an embedding in the named space.
    pub fn with_vector(mut self, space: impl Into<String>, vector: Vec<f32>) -> Self {
        self.vectors.push((space.into(), vector));
        self
    }
}
