//! A dataset's rows and corpus in the shape upstream's dataset objects hand them out: what its
//! `get_data` returns and what its `corpus` holds.

use mb_datasets::corpus::Conversation;
use mb_datasets::{Row, SplitName};
use serde_json::{json, Map, Value};

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

/// A corpus in LoCoMo's `conversation` form, the form upstream's `corpus` has for both LoCoMo
/// and DialSim: `speaker_a`/`speaker_b` when known, then per session `session_<n>_date_time`
/// and `session_<n>` (its turns' `speaker`, `dia_id` and `text`).
pub fn corpus_object(conversation: &Conversation) -> Value {
    let mut object = Map::new();
    if let Some(a) = &conversation.speaker_a {
        object.insert("speaker_a".into(), Value::from(a.as_str()));
    }
    if let Some(b) = &conversation.speaker_b {
        object.insert("speaker_b".into(), Value::from(b.as_str()));
    }
    for (n, session) in conversation.sessions.iter().enumerate() {
        let n = n + 1;
        object.insert(
            format!("session_{n}_date_time"),
            Value::from(session.date_time.as_str()),
        );
        let turns: Vec<Value> = session
            .turns
            .iter()
            .map(|t| json!({"speaker": t.speaker, "dia_id": t.dia_id, "text": t.text}))
            .collect();
        object.insert(format!("session_{n}"), Value::Array(turns));
    }
    Value::Object(object)
}
