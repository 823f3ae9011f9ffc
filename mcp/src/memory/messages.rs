//! The messages a memory tool is given: a dialog of role-tagged messages, or (as mem0's `add`
//! takes it) a plain string.

use schemars::JsonSchema;
use serde::Deserialize;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    /// The user.
    User,
    /// The agent.
    Assistant,
    /// Instructions.
    System,
}

/// One message of a dialog to remember.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageArg {
    /// Who wrote it.
    pub role: MessageRole,
    /// What it says.
    pub content: String,
}

/// What to remember: a dialog, or (as mem0's `add` takes it) a plain string, which is one user
/// message. Read by hand rather than as an untagged enum, so that a bad message is still named
/// by its path (`messages[0].role`).
#[derive(Debug, Clone, JsonSchema)]
#[serde(untagged)]
pub enum MessagesArg {
    /// One message from the user.
    Text(String),
    /// The dialog, in order.
    Dialog(Vec<MessageArg>),
}

impl<'de> Deserialize<'de> for MessagesArg {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Messages;
        impl<'de> serde::de::Visitor<'de> for Messages {
            type Value = MessagesArg;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of messages, or a string")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<MessagesArg, E> {
                Ok(MessagesArg::Text(text.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<MessagesArg, A::Error> {
                let dialog =
                    Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
                Ok(MessagesArg::Dialog(dialog))
            }
        }
        deserializer.deserialize_any(Messages)
    }
}

impl MessagesArg {
    /// The messages, a plain string as one user message.
    pub fn into_messages(self) -> Vec<MessageArg> {
        match self {
            MessagesArg::Text(content) => vec![MessageArg {
                role: MessageRole::User,
                content,
            }],
            MessagesArg::Dialog(messages) => messages,
        }
    }
}
