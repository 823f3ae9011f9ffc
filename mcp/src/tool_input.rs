//! Tool arguments: typed structs parsed from the raw JSON object with the path of a bad field
//! in the error, after the raw value is checked against the size bounds of [`crate::limits`].
//! Input schemas come from the same structs (schemars).

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_empty_input, schema_for_input};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::McpError;
use crate::limits;

/// The input schema of a tool taking `T`.
pub fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|_| schema_for_empty_input())
}

/// Parses tool arguments into `T`; an error names the offending field.
pub fn parse<T: DeserializeOwned>(arguments: JsonObject) -> Result<T, McpError> {
    let value = Value::Object(arguments);
    check_sizes("arguments", &value)?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            "arguments".to_string()
        } else {
            path
        };
        McpError::invalid(field, e.inner().to_string())
    })
}

/// Checks every string and array in `value` against the bounds, naming the first too large.
fn check_sizes(path: &str, value: &Value) -> Result<(), McpError> {
    match value {
        Value::String(s) => limits::check_string(path, s),
        Value::Array(items) => {
            limits::check_items(path, items)?;
            items
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| check_sizes(&format!("{path}[{i}]"), item))
        }
        Value::Object(fields) => {
            limits::check_items(path, &fields.iter().collect::<Vec<_>>())?;
            fields.iter().try_for_each(|(key, item)| {
                let child = if path == "arguments" {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                check_sizes(&child, item)
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Args {
        names: Vec<String>,
        limit: Option<u32>,
    }

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn errors_name_the_field() {
        let error = parse::<Args>(object(serde_json::json!({"names": ["a", 3]}))).unwrap_err();
        assert!(error.to_string().contains("names[1]"), "{error}");
        let error = parse::<Args>(object(serde_json::json!({}))).unwrap_err();
        assert!(error.to_string().contains("names"), "{error}");
        let error =
            parse::<Args>(object(serde_json::json!({"names": [], "limit": -1}))).unwrap_err();
        assert!(error.to_string().contains("`limit`"), "{error}");
        let long = "x".repeat(limits::MAX_STRING_BYTES + 1);
        let error = parse::<Args>(object(serde_json::json!({"names": [long]}))).unwrap_err();
        assert!(error.to_string().contains("names[0]"), "{error}");
    }
}
