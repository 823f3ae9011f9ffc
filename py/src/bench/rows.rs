//! A dataset's rows in the shape upstream's dataset objects hand them out: what its `get_data`
//! returns.

use mb_datasets::{Row, SplitName};
use serde_json::{Map, Value};

/// The columns upstream's loader decodes from their stored text (`convert_str_to_obj`).
fn decoded_column(name: &str) -> bool {
    name.starts_with("dialog")
        || name.starts_with("implicit_feedback")
        || name == "input_chat_messages"
        || name == "info"
}

/// The row as upstream's `get_data` returns it: every stored column, the text-encoded ones
/// (`info`, `input_chat_messages`, `dialog*`, `implicit_feedback*`) decoded (a LoCoMo golden
/// answer is already the text upstream's loader makes of it), and `set_name` when `split` is
/// given.
pub fn upstream_row(row: &Row, split: Option<SplitName>) -> Map<String, Value> {
    let mut columns = row.to_columns();
    for (name, value) in columns.iter_mut() {
        if !decoded_column(name) {
            continue;
        }
        if let Value::String(text) = value {
            if let Ok(decoded) = serde_json::from_str::<Value>(text) {
                *value = decoded;
            }
        }
    }
    if let Some(split) = split {
        columns.insert("set_name".into(), Value::from(split.as_str()));
    }
    columns
}
