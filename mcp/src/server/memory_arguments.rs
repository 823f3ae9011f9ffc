//! The memory tools' arguments: typed structs whose schemas are the tools' input schemas.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::memory::messages::MessagesArg;

/// Whose memory: a user, and optionally an agent whose memory of the user is kept apart.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnerArgs {
    /// The user (1 to 128 bytes: letters, digits, `_`, `-`, `.`, `@`).
    pub user_id: String,
    /// The agent, when its memory is kept apart from the user's shared one.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// Arguments of `add_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    /// The user (1 to 128 bytes: letters, digits, `_`, `-`, `.`, `@`).
    pub user_id: String,
    /// The agent, when its memory is kept apart from the user's shared one.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The dialog to remember, in order (1 to 200 messages), or a plain string: one message
    /// from the user.
    pub messages: MessagesArg,
    /// Wait until the dialog is memorized and return the memories made of it (default: return
    /// as soon as it is queued durably; it is searchable at once as `pending`).
    #[serde(default)]
    pub wait: bool,
    /// Attached to every memory made of the dialog (a JSON object, at most 16 KiB), for
    /// `filters` to select by.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// Arguments of `search_memories`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// The user.
    pub user_id: String,
    /// The agent, when its memory is kept apart.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// What to look for.
    pub query: String,
    /// How many memories to return (1 to 100; default: the system's retrieve_k).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Keep only memories whose metadata match, in mem0's filter language: `{"key": value}`
    /// (exact), `{"key": [a, b]}` (any), `{"key": {"gte": 3, "lt": "2025-01-01"}}` (ranges on
    /// numbers and ISO dates), `eq ne in nin contains icontains`, and `AND`/`OR`/`NOT` lists.
    #[serde(default)]
    pub filters: Option<Map<String, Value>>,
}

/// Arguments naming one memory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryIdArgs {
    /// The user.
    pub user_id: String,
    /// The agent, when its memory is kept apart.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The memory's id (as `add_memory`, `list_memories` or `search_memories` return it).
    pub memory_id: u64,
}

/// Arguments of `list_memories`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// The user.
    pub user_id: String,
    /// The agent, when its memory is kept apart.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The `next_cursor` of the previous page; none for the first page.
    #[serde(default)]
    pub cursor: Option<u64>,
    /// Page size (1 to 100, default 20).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Keep only memories whose metadata match (mem0's filter language, as `search_memories`
    /// takes it); the page then holds the next `limit` matching memories.
    #[serde(default)]
    pub filters: Option<Map<String, Value>>,
}

/// Arguments of `update_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The user.
    pub user_id: String,
    /// The agent, when its memory is kept apart.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The memory's id.
    pub memory_id: u64,
    /// Its new text.
    pub text: String,
    /// Its new metadata (replacing what it had); none keeps it.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// Arguments of `delete_all_memories`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserArgs {
    /// The user whose memories (and their agents' memories of them) are all deleted.
    pub user_id: String,
}
