//! Reading the JSON shapes operations ask for, leniently.

use serde_json::Value;

use crate::extract_json;

/// The value under `key` of the first JSON object in `text`, or the first JSON array itself
/// when the model sent the list bare.
pub fn list_field(text: &str, key: &str) -> Option<Value> {
    match extract_json(text)? {
        list @ Value::Array(_) => Some(list),
        Value::Object(mut map) => map.remove(key),
        _ => None,
    }
}

/// The non-blank strings of a JSON array, trimmed; `None` if it is not an array of strings.
pub fn strings(value: &Value) -> Option<Vec<String>> {
    let items: Option<Vec<String>> = value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(|s| s.trim().to_string()))
        .collect();
    let mut items = items?;
    items.retain(|s| !s.is_empty());
    Some(items)
}
