//! Typed dataset rows: MemoryBench's Hugging Face row schema after upstream's column
//! conversion.
//!
//! Upstream stores every non-scalar column as a string and converts `dialog*`,
//! `implicit_feedback*`, `input_chat_messages` and `info` back to objects (Python literal or
//! JSON). [`Row::from_columns`] does the same and then types the result, so a malformed cell is
//! reported with its dataset, split, row and field instead of surfacing later as a wrong answer.

use std::collections::BTreeMap;

use mb_core::pyliteral::parse_column;
use mb_core::{Lang, Message, Role};
use serde_json::{Map, Value};

mod dialog;

pub use dialog::{Action, Dialog, DialogMessage, Feedback};

/// What the model is asked: a single prompt or a prepared chat (JuDGE, LimitGen).
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// `input_prompt`: sent as one user message.
    Prompt(String),
    /// `input_chat_messages`: sent as given (system and user messages).
    Chat(Vec<Message>),
}

impl Input {
    /// The chat that starts a conversation about this row (upstream's
    /// `get_initial_chat_messages`).
    pub fn initial_messages(&self) -> Vec<Message> {
        match self {
            Input::Prompt(prompt) => vec![Message::user(prompt.clone())],
            Input::Chat(messages) => messages.clone(),
        }
    }

    /// The text a metric or a retriever sees as the question: the prompt, or the last user
    /// message of a prepared chat.
    pub fn query_text(&self) -> &str {
        match self {
            Input::Prompt(prompt) => prompt,
            Input::Chat(messages) => messages
                .iter()
                .rev()
                .find(|m| m.role == Role::User)
                .map_or("", |m| m.content.as_str()),
        }
    }
}

/// One dataset row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Upstream's raw-loader index: unique within the dataset, not necessarily contiguous.
    pub test_idx: u64,
    /// The dataset it belongs to (its config key).
    pub dataset: String,
    /// What the model is asked.
    pub input: Input,
    /// Its language.
    pub lang: Lang,
    /// Evaluation metadata (golden answers, checklists, categories, evidence).
    pub info: Map<String, Value>,
    /// Recorded dialogs by column stem: `""` for `dialog`, `"bm25"` for `dialog_bm25`, …
    pub dialogs: BTreeMap<String, Dialog>,
    /// Reference-only columns (`origin_question`, `id`, `category`, `domain`, …).
    pub extras: BTreeMap<String, Value>,
}

/// A cell that cannot be read, located by its field; the caller adds dataset, split and row.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("field {field:?}: {detail}")]
#[non_exhaustive]
pub struct FieldError {
    /// The column.
    pub field: String,
    /// What is wrong with it.
    pub detail: String,
}

fn field_error(field: &str, detail: impl Into<String>) -> FieldError {
    FieldError {
        field: field.to_string(),
        detail: detail.into(),
    }
}

impl Row {
    /// Types one row from its raw columns (strings and integers, as stored), applying
    /// upstream's conversion of string-encoded columns.
    pub fn from_columns(mut columns: Map<String, Value>) -> Result<Row, FieldError> {
        let test_idx = match columns.remove("test_idx") {
            Some(Value::Number(n)) => n
                .as_u64()
                .ok_or_else(|| field_error("test_idx", format!("{n} is not an index")))?,
            Some(Value::String(s)) => s
                .trim()
                .parse()
                .map_err(|_| field_error("test_idx", format!("{s:?} is not an index")))?,
            Some(other) => return Err(field_error("test_idx", format!("{other} is not an index"))),
            None => return Err(field_error("test_idx", "missing")),
        };
        let dataset = take_string(&mut columns, "dataset_name")?;
        let lang = match take_string(&mut columns, "lang")?.as_str() {
            "en" => Lang::En,
            "zh" => Lang::Zh,
            other => {
                return Err(field_error(
                    "lang",
                    format!("{other:?} is neither en nor zh"),
                ))
            }
        };
        let prompt = match columns.remove("input_prompt") {
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            Some(Value::String(_) | Value::Null) | None => None,
            Some(other) => return Err(field_error("input_prompt", format!("{other} is not text"))),
        };
        let chat = columns.remove("input_chat_messages");
        let input = match (prompt, chat) {
            (Some(prompt), _) => Input::Prompt(prompt),
            (None, Some(chat)) if !chat.is_null() && chat != Value::String(String::new()) => {
                let messages: Vec<DialogMessage> = typed("input_chat_messages", chat)?;
                Input::Chat(messages.iter().map(DialogMessage::message).collect())
            }
            _ => {
                return Err(field_error(
                    "input_prompt",
                    "neither input_prompt nor input_chat_messages is given",
                ))
            }
        };
        let info = match columns.remove("info").map(|v| decoded("info", v)) {
            Some(Ok(Value::Object(map))) => map,
            Some(Ok(Value::Null)) | None => Map::new(),
            Some(Ok(other)) => return Err(field_error("info", format!("{other} is not a dict"))),
            Some(Err(error)) => return Err(error),
        };
        let mut dialogs = BTreeMap::new();
        let names: Vec<String> = columns.keys().cloned().collect();
        for name in names {
            let Some(stem) = name.strip_prefix("dialog") else {
                continue;
            };
            let stem = match stem {
                "" => "",
                s => s.strip_prefix('_').unwrap_or(s),
            };
            let feedback_column = if stem.is_empty() {
                "implicit_feedback".to_string()
            } else {
                format!("implicit_feedback_{stem}")
            };
            let feedback = columns.remove(&feedback_column);
            let messages = match columns.remove(&name) {
                Some(Value::Null) | None => continue,
                Some(value) => typed(&name, value)?,
            };
            let feedback = match feedback {
                Some(Value::Null) | None => Vec::new(),
                Some(value) => feedback_list(&feedback_column, decoded(&feedback_column, value)?)?,
            };
            dialogs.insert(stem.to_string(), Dialog::from_recorded(messages, feedback));
        }
        Ok(Row {
            test_idx,
            dataset,
            input,
            lang,
            info,
            dialogs,
            extras: columns.into_iter().collect(),
        })
    }

    /// The row as the Hugging Face copy stores it (dict and list columns as JSON strings), so
    /// that [`Row::from_columns`] reads it back unchanged.
    pub fn to_columns(&self) -> Map<String, Value> {
        let text = |value: &Value| Value::String(value.to_string());
        let mut columns: Map<String, Value> = self.extras.clone().into_iter().collect();
        columns.insert("test_idx".into(), Value::from(self.test_idx));
        columns.insert("dataset_name".into(), Value::from(self.dataset.clone()));
        columns.insert("lang".into(), Value::from(self.lang_code()));
        match &self.input {
            Input::Prompt(prompt) => {
                columns.insert("input_prompt".into(), Value::from(prompt.clone()));
            }
            Input::Chat(messages) => {
                columns.insert("input_prompt".into(), Value::from(""));
                let messages = serde_json::to_value(messages).unwrap_or(Value::Null);
                columns.insert("input_chat_messages".into(), text(&messages));
            }
        }
        columns.insert("info".into(), text(&Value::Object(self.info.clone())));
        for (stem, dialog) in &self.dialogs {
            let (dialog_column, feedback_column) = if stem.is_empty() {
                ("dialog".to_string(), "implicit_feedback".to_string())
            } else {
                (
                    format!("dialog_{stem}"),
                    format!("implicit_feedback_{stem}"),
                )
            };
            let messages = serde_json::to_value(dialog.recorded()).unwrap_or(Value::Null);
            columns.insert(dialog_column, text(&messages));
            let feedback: Vec<Value> = dialog.feedback.iter().map(Feedback::to_value).collect();
            columns.insert(feedback_column, text(&Value::Array(feedback)));
        }
        columns
    }

    fn lang_code(&self) -> &'static str {
        match self.lang {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// The dialog recorded for a memory system: corpus datasets record one per system
    /// (`dialog_<stem>`), the others one for all (`dialog`).
    pub fn dialog_for(&self, stem: &str) -> Option<&Dialog> {
        self.dialogs.get(stem).or_else(|| self.dialogs.get(""))
    }

    /// `info.golden_answer` as text, where the dataset has one.
    pub fn golden_answer(&self) -> Option<&str> {
        self.info.get("golden_answer").and_then(Value::as_str)
    }
}

fn take_string(columns: &mut Map<String, Value>, field: &str) -> Result<String, FieldError> {
    match columns.remove(field) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(field_error(field, format!("{other} is not text"))),
        None => Err(field_error(field, "missing")),
    }
}

/// Upstream's `convert_str_to_obj`: a string cell is a Python literal or JSON; anything else
/// is already an object.
fn decoded(field: &str, value: Value) -> Result<Value, FieldError> {
    match value {
        Value::String(text) => parse_column(&text).map_err(|e| field_error(field, e.to_string())),
        other => Ok(other),
    }
}

fn typed<T: serde::de::DeserializeOwned>(field: &str, value: Value) -> Result<T, FieldError> {
    serde_json::from_value(decoded(field, value)?).map_err(|e| field_error(field, e.to_string()))
}

fn feedback_list(field: &str, value: Value) -> Result<Vec<Feedback>, FieldError> {
    let Value::Array(entries) = value else {
        return Err(field_error(field, "is not a list"));
    };
    entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| {
            Feedback::from_value(&entry).map_err(|e| field_error(field, format!("entry {i}: {e}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn columns(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn string_columns_are_decoded_and_typed() {
        let row = Row::from_columns(columns(json!({
            "test_idx": 7,
            "dataset_name": "NFCats",
            "lang": "en",
            "input_prompt": "Why is the sky blue?",
            "info": "{'golden_answer': 'Rayleigh', 'ok': True}",
            "dialog": "[{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'a'}]",
            "implicit_feedback": "[{'round': 1, 'implicit_action': 'like', 'terminated': True}]",
            "origin_question": "sky?",
        })))
        .unwrap();
        assert_eq!(row.test_idx, 7);
        assert_eq!(row.golden_answer(), Some("Rayleigh"));
        assert_eq!(row.info["ok"], json!(true));
        let dialog = row.dialog_for("bm25").unwrap();
        assert_eq!(dialog.messages.len(), 2);
        assert_eq!(dialog.feedback[0].actions, vec![Action::Like]);
        assert_eq!(dialog.feedback[0].terminated, Some(true));
        assert_eq!(row.extras["origin_question"], json!("sky?"));
        assert_eq!(row.input.query_text(), "Why is the sky blue?");
    }

    #[test]
    fn published_feedback_shape_and_per_system_dialogs() {
        let row = Row::from_columns(columns(json!({
            "test_idx": "3",
            "dataset_name": "Locomo-0",
            "lang": "en",
            "input_prompt": "",
            "input_chat_messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
            "dialog_bm25": "[{\"role\": \"user\", \"content\": \"q\", \"origin_content\": \"p\"}]",
            "implicit_feedback_bm25": "[{\"round\": 1, \"implicit_actions\": [\"dislike\", \"copy\"], \"satisfaction_score\": 2}]",
            "dialog_mem0": null,
        })))
        .unwrap();
        assert!(matches!(row.input, Input::Chat(ref m) if m.len() == 2));
        assert_eq!(row.input.query_text(), "u");
        let dialog = row.dialog_for("bm25").unwrap();
        assert_eq!(dialog.extra_keys[&0]["origin_content"], json!("p"));
        assert_eq!(dialog.recorded()[0].extra["origin_content"], json!("p"));
        assert_eq!(
            dialog.feedback[0].actions,
            vec![Action::Dislike, Action::Copy]
        );
        assert_eq!(dialog.feedback[0].satisfaction_score, Some(2.0));
        assert!(row.dialog_for("mem0").is_none());
    }

    #[test]
    fn rows_round_trip_through_stored_columns() {
        let row = Row::from_columns(columns(json!({
            "test_idx": 4, "dataset_name": "Locomo-0", "lang": "en", "input_prompt": "",
            "input_chat_messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
            "info": {"golden_answer": "May", "category": 2},
            "dialog_bm25": [{"role": "user", "content": "q", "origin_content": "p"}, {"role": "assistant", "content": "a"}],
            "implicit_feedback_bm25": [{"round": 0, "implicit_action": "dislike", "terminated": false}],
            "origin_question": "When?",
        })))
        .unwrap();
        let stored = row.to_columns();
        assert!(stored["info"].is_string() && stored["dialog_bm25"].is_string());
        assert_eq!(Row::from_columns(stored).unwrap(), row);
    }

    #[test]
    fn bad_cells_name_their_field() {
        let base = json!({"test_idx": 1, "dataset_name": "X", "lang": "en", "input_prompt": "p"});
        let with = |key: &str, value: Value| {
            let mut map = columns(base.clone());
            map.insert(key.into(), value);
            Row::from_columns(map).unwrap_err()
        };
        assert_eq!(with("info", json!("{'a': ")).field, "info");
        assert_eq!(with("lang", json!("fr")).field, "lang");
        assert_eq!(with("test_idx", json!(-1)).field, "test_idx");
        let mut shrug = columns(base.clone());
        shrug.insert("dialog".into(), json!("[]"));
        shrug.insert(
            "implicit_feedback".into(),
            json!("[{'round': 1, 'implicit_action': 'shrug'}]"),
        );
        let error = Row::from_columns(shrug).unwrap_err();
        assert_eq!(error.field, "implicit_feedback");
        assert!(error.to_string().contains("entry 0"), "{error}");
        let mut missing = columns(base);
        missing.remove("input_prompt");
        assert_eq!(
            Row::from_columns(missing).unwrap_err().field,
            "input_prompt"
        );
    }
}
