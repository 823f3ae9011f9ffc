//! Metadata a caller attaches to memories (mem0's `metadata`): a JSON object stored as one
//! record attribute, so it travels with the record through updates, exports and imports.

use mb_engine::{NewRecord, Record};
use serde_json::{Map, Value};

use crate::error::MemoryError;

/// The record attribute holding a memory's metadata (a JSON object, compact).
pub const METADATA: &str = "metadata";
/// The largest metadata accepted, in bytes of compact JSON.
pub const MAX_METADATA_BYTES: usize = 16 * 1024;
/// The deepest nesting of objects and arrays accepted in metadata.
pub const MAX_METADATA_DEPTH: usize = 8;

/// Checked metadata: a JSON object of at most [`MAX_METADATA_BYTES`] and
/// [`MAX_METADATA_DEPTH`] levels.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    fields: Map<String, Value>,
    json: String,
}

impl Metadata {
    /// Checks `value` (named `field` in errors) as metadata: an object within the bounds.
    pub fn new(value: Value, field: &str) -> Result<Metadata, MemoryError> {
        if value.is_object() && depth(&value) > MAX_METADATA_DEPTH {
            return Err(MemoryError::BadInput(format!(
                "{field} nests deeper than {MAX_METADATA_DEPTH} levels"
            )));
        }
        let Value::Object(fields) = value else {
            return Err(MemoryError::BadInput(format!(
                "{field} must be an object of keys to values, got {}",
                kind(&value)
            )));
        };
        let json = serde_json::to_string(&fields)
            .map_err(|e| MemoryError::BadInput(format!("{field}: {e}")))?;
        if json.len() > MAX_METADATA_BYTES {
            return Err(MemoryError::BadInput(format!(
                "{field} is {} bytes of JSON, more than the {MAX_METADATA_BYTES} allowed",
                json.len()
            )));
        }
        Ok(Metadata { fields, json })
    }

    /// The metadata's fields.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    /// `record` carrying this metadata.
    pub fn stamp(&self, record: NewRecord) -> NewRecord {
        record.with_attribute(METADATA, self.json.clone())
    }

    /// The metadata `record` carries (an empty object when none, or when the attribute is not
    /// a JSON object: records written by other means).
    pub fn of(record: &Record) -> Map<String, Value> {
        match record.attribute(METADATA).map(serde_json::from_str) {
            Some(Ok(Value::Object(fields))) => fields,
            _ => Map::new(),
        }
    }
}

/// `record` with `metadata` when there is some.
pub fn stamped(record: NewRecord, metadata: Option<&Metadata>) -> NewRecord {
    match metadata {
        Some(metadata) => metadata.stamp(record),
        None => record,
    }
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The JSON kind of `value`, for errors.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_is_an_object_within_bounds() {
        let ok = Metadata::new(json!({"topic": "food", "n": 3}), "metadata").unwrap();
        let record = ok.stamp(NewRecord::new("x"));
        assert_eq!(record.attributes[METADATA], r#"{"n":3,"topic":"food"}"#);
        let err = Metadata::new(json!(["a"]), "metadata").unwrap_err();
        assert!(
            err.to_string().contains("metadata must be an object"),
            "{err}"
        );
        let big = json!({"k": "x".repeat(MAX_METADATA_BYTES)});
        assert!(Metadata::new(big, "metadata").is_err());
        let mut deep = json!(1);
        for _ in 0..=MAX_METADATA_DEPTH {
            deep = json!({ "d": deep });
        }
        let err = Metadata::new(deep, "metadata").unwrap_err();
        assert!(err.to_string().contains("deeper"), "{err}");
    }
}
