//! How a rig document is laid out in engine records, and read back.
//!
//! A rig document is any `Serialize` value with one or more embeddings. Each embedding becomes
//! one engine record in the index's namespace:
//!
//! - `text`: the text that embedding was computed from, so the engine's BM25 search finds the
//!   document by the same words;
//! - `body`: the whole document as JSON, what [`top_n`](rig_core::vector_store::VectorStoreIndex)
//!   deserializes into the caller's type;
//! - attribute [`DOCUMENT_ID`]: the document's id, shared by all its records;
//! - one attribute per top-level string, boolean or integer field of the document, so that rig
//!   filters (and the engine's own [`mb_engine::Filter`]) can select on them;
//! - the embedding, in the index's space.
//!
//! Records written to the namespace without this crate (no [`DOCUMENT_ID`] attribute) read back
//! as the JSON string of their content, with their record id as document id, so an index also
//! serves memories stored directly through the engine.

use mb_engine::{NewRecord, Record};
use serde_json::Value;

use crate::error::{Error, Result};

/// Attribute holding the rig document id of a record written through this crate. A document
/// field of the same name is not copied into the attributes.
pub const DOCUMENT_ID: &str = "rig:id";

/// One document prepared for storage: its id, JSON body and attributes, without vectors.
#[derive(Debug, Clone)]
pub(crate) struct StoredDocument {
    id: String,
    body: String,
    attributes: Vec<(String, String)>,
}

impl StoredDocument {
    /// Lays out `document` under `id`.
    pub(crate) fn new(id: String, document: &Value) -> Result<StoredDocument> {
        let body = serde_json::to_string(document)?;
        let attributes = match document {
            Value::Object(fields) => fields
                .iter()
                .filter(|(key, _)| key.as_str() != DOCUMENT_ID)
                .filter_map(|(key, value)| attribute_text(value).map(|text| (key.clone(), text)))
                .collect(),
            _ => Vec::new(),
        };
        Ok(StoredDocument {
            id,
            body,
            attributes,
        })
    }

    /// The document's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The record for one of the document's embeddings: `text` is what was embedded (the JSON
    /// body when the embedding does not say), `vector` its embedding in `space`.
    pub(crate) fn record(&self, text: &str, space: &str, vector: Vec<f32>) -> NewRecord {
        let text = if text.trim().is_empty() {
            self.body.as_str()
        } else {
            text
        };
        let mut record = NewRecord::new(text)
            .with_body(self.body.clone())
            .with_attribute(DOCUMENT_ID, self.id.clone())
            .with_vector(space, vector);
        for (key, value) in &self.attributes {
            record = record.with_attribute(key.clone(), value.clone());
        }
        record
    }
}

/// The attribute text of a JSON value, for the values an attribute filter can compare: strings
/// as they are, booleans and integers as their JSON text. Other values stay in the body only.
pub(crate) fn attribute_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        _ => None,
    }
}

/// The rig document id of a stored record.
pub(crate) fn document_id(record: &Record) -> String {
    match record.attribute(DOCUMENT_ID) {
        Some(id) => id.to_owned(),
        None => record.id.to_string(),
    }
}

/// The document a stored record holds, as JSON.
pub(crate) fn document_json(record: &Record) -> Result<Value> {
    match (record.attribute(DOCUMENT_ID), &record.body) {
        (Some(_), Some(body)) => serde_json::from_str(body).map_err(Error::from),
        _ => Ok(Value::String(record.content().to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mb_engine::RecordId;
    use serde_json::json;

    #[test]
    fn scalar_fields_become_attributes_and_the_body_round_trips() {
        let document = json!({
            "text": "Alice adopted a cat",
            "speaker": "Alice",
            "session": 3,
            "pinned": true,
            "score": 0.5,
            "tags": ["pets"],
            "rig:id": "spoofed",
        });
        let stored = StoredDocument::new("doc-1".into(), &document).unwrap();
        let new = stored.record("Alice adopted a cat", "space", vec![1.0]);
        assert_eq!(new.attributes.get(DOCUMENT_ID).unwrap(), "doc-1");
        assert_eq!(new.attributes.get("speaker").unwrap(), "Alice");
        assert_eq!(new.attributes.get("session").unwrap(), "3");
        assert_eq!(new.attributes.get("pinned").unwrap(), "true");
        assert!(!new.attributes.contains_key("score"));
        assert!(!new.attributes.contains_key("tags"));

        let record = Record {
            id: RecordId(7),
            text: new.text.clone(),
            body: new.body.clone(),
            attributes: new.attributes.clone(),
            created_at_ms: 0,
            seq: 1,
        };
        assert_eq!(document_id(&record), "doc-1");
        assert_eq!(document_json(&record).unwrap(), document);
    }

    #[test]
    fn foreign_records_read_as_their_content() {
        let record = Record {
            id: RecordId(42),
            text: "indexed".into(),
            body: Some("shown".into()),
            attributes: Default::default(),
            created_at_ms: 0,
            seq: 1,
        };
        assert_eq!(document_id(&record), "42");
        assert_eq!(document_json(&record).unwrap(), json!("shown"));
    }

    #[test]
    fn an_empty_embedded_text_indexes_the_body() {
        let stored = StoredDocument::new("d".into(), &json!({"a": "b"})).unwrap();
        assert_eq!(stored.record("  ", "s", vec![1.0]).text, r#"{"a":"b"}"#);
    }
}
