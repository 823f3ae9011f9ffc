//! A recorded dialog: its messages (as a memory takes them, with any extra keys a file carried)
//! and the simulated user's implicit feedback in either of upstream's shapes.

use std::collections::BTreeMap;

use mb_core::{Message, Role};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One message of a recorded dialog, keeping any extra keys upstream wrote (corpus-dataset
/// dialogs carry `origin_content` on their first user message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogMessage {
    /// Author.
    pub role: Role,
    /// Text.
    pub content: String,
    /// Other keys, kept as written.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl DialogMessage {
    /// The message as sent to a model.
    pub fn message(&self) -> Message {
        Message {
            role: self.role,
            content: self.content.clone(),
        }
    }
}

/// A user's implicit reaction to an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Explicit approval.
    Like,
    /// Explicit disapproval.
    Dislike,
    /// The user copied the answer (implicit approval).
    Copy,
    /// No reaction.
    None,
}

/// The simulator's reaction to one assistant turn. Both upstream shapes are read: the current
/// `{round, implicit_action, terminated}` and the published data's `{round, implicit_actions,
/// satisfaction_score}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    /// Round number as written (1-based in generated dialogs, 0-based on-policy).
    pub round: i64,
    /// The actions taken (one in the current shape, any number in the published one).
    pub actions: Vec<Action>,
    /// Whether the user ended the conversation, where recorded.
    pub terminated: Option<bool>,
    /// The published data's satisfaction score, where recorded.
    pub satisfaction_score: Option<f64>,
}

impl Feedback {
    /// The entry in the current upstream shape (`implicit_actions` when there are several).
    pub fn to_value(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("round".into(), Value::from(self.round));
        let action = |a: &Action| serde_json::to_value(a).unwrap_or(Value::Null);
        match self.actions.as_slice() {
            [one] => {
                entry.insert("implicit_action".into(), action(one));
            }
            many => {
                entry.insert(
                    "implicit_actions".into(),
                    Value::Array(many.iter().map(action).collect()),
                );
            }
        }
        if let Some(terminated) = self.terminated {
            entry.insert("terminated".into(), Value::from(terminated));
        }
        if let Some(score) = self.satisfaction_score {
            entry.insert("satisfaction_score".into(), Value::from(score));
        }
        Value::Object(entry)
    }

    /// An entry in either upstream shape; what is wrong with it otherwise.
    pub(crate) fn from_value(entry: &Value) -> Result<Feedback, String> {
        let action = |v: &Value| -> Result<Action, String> {
            serde_json::from_value(v.clone()).map_err(|_| format!("unknown action {v}"))
        };
        let actions = match (entry.get("implicit_action"), entry.get("implicit_actions")) {
            (Some(one), _) if !one.is_null() => vec![action(one)?],
            (_, Some(Value::Array(many))) => many.iter().map(action).collect::<Result<_, _>>()?,
            (_, Some(Value::Null) | None) => Vec::new(),
            (_, Some(other)) => return Err(format!("implicit_actions {other} is not a list")),
        };
        Ok(Feedback {
            round: entry
                .get("round")
                .and_then(Value::as_i64)
                .ok_or("missing round")?,
            actions,
            terminated: entry.get("terminated").and_then(Value::as_bool),
            satisfaction_score: entry.get("satisfaction_score").and_then(Value::as_f64),
        })
    }
}

/// A recorded training dialog with its implicit feedback.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Dialog {
    /// Messages in order, as a memory system takes them.
    pub messages: Vec<Message>,
    /// The keys a message carried beyond role and content (corpus dialogs' `origin_content`),
    /// by the message's position, so that a written row reads back unchanged.
    pub extra_keys: BTreeMap<usize, Map<String, Value>>,
    /// Feedback per assistant turn.
    pub feedback: Vec<Feedback>,
}

impl Dialog {
    /// The dialog of `recorded` messages, as a file or a conversation wrote them.
    pub fn from_recorded(recorded: Vec<DialogMessage>, feedback: Vec<Feedback>) -> Dialog {
        let mut extra_keys = BTreeMap::new();
        let messages = recorded
            .into_iter()
            .enumerate()
            .map(|(position, m)| {
                if !m.extra.is_empty() {
                    extra_keys.insert(position, m.extra);
                }
                Message {
                    role: m.role,
                    content: m.content,
                }
            })
            .collect();
        Dialog {
            messages,
            extra_keys,
            feedback,
        }
    }

    /// The messages as a file records them, each with its extra keys.
    pub fn recorded(&self) -> Vec<DialogMessage> {
        self.messages
            .iter()
            .enumerate()
            .map(|(position, m)| DialogMessage {
                role: m.role,
                content: m.content.clone(),
                extra: self.extra_keys.get(&position).cloned().unwrap_or_default(),
            })
            .collect()
    }
}
