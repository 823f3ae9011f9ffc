//! The memory tools: add, search, get, list (paged), update, delete one, delete a user, Mem0's
//! history, and the status. Arguments are typed structs (their schemas are the tools' input
//! schemas); results are JSON objects, as text and as structured content.

use rmcp::handler::server::common::schema_for_empty_input;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::args;
use crate::error::McpError;
use crate::limits;
use crate::memory::service::Owner;
use crate::server::Server;

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
    /// The dialog to remember, in order (at least one message).
    pub messages: Vec<MessageArg>,
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
}

/// Arguments of `delete_all_memories`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserArgs {
    /// The user whose memories (and their agents' memories of them) are all deleted.
    pub user_id: String,
}

/// Checks an id argument's length and characters.
fn check_id(field: &str, id: &str) -> Result<(), McpError> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "_-.@".contains(c);
    if id.is_empty() || id.len() > limits::MAX_ID_BYTES || !id.chars().all(ok_char) {
        return Err(McpError::invalid(
            field,
            format!(
                "{id:?} is not an id: 1 to {} bytes of letters, digits, `_`, `-`, `.`, `@`",
                limits::MAX_ID_BYTES
            ),
        ));
    }
    Ok(())
}

fn owner(user_id: &str, agent_id: &Option<String>) -> Result<Owner, McpError> {
    check_id("user_id", user_id)?;
    if let Some(agent) = agent_id {
        check_id("agent_id", agent)?;
    }
    Ok(Owner {
        user_id: user_id.to_string(),
        agent_id: agent_id.clone(),
    })
}

fn page_size(field: &str, limit: Option<u32>, default: usize) -> Result<usize, McpError> {
    match limit {
        None => Ok(default.min(limits::MAX_PAGE)),
        Some(n) if (1..=limits::MAX_PAGE as u32).contains(&n) => Ok(n as usize),
        Some(n) => Err(McpError::invalid(
            field,
            format!("{n} is out of range 1..={}", limits::MAX_PAGE),
        )),
    }
}

fn memory_json(record: &mb_engine::Record) -> Value {
    json!({
        "id": record.id.0,
        "text": record.content(),
        "created_at_ms": record.created_at_ms,
        "attributes": record.attributes,
    })
}

fn reply(outcome: Result<Value, McpError>) -> CallToolResult {
    match outcome.and_then(|value| {
        serde_json::to_string_pretty(&value)
            .map(|text| (text, value))
            .map_err(|e| McpError::Io(e.to_string()))
    }) {
        Ok((text, value)) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(value);
            result
        }
        Err(e) => e.into_tool_result(),
    }
}

#[tool_router(router = memory_router, vis = "pub(crate)")]
impl Server {
    #[tool(
        description = "Remember a dialog for a user (and optionally an agent): the memory system stores it as memories. Returns the memories added.",
        input_schema = args::schema::<AddArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn add_memory(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        reply(
            async {
                let args: AddArgs = args::parse(raw)?;
                let owner = owner(&args.user_id, &args.agent_id)?;
                if args.messages.is_empty() {
                    return Err(McpError::invalid(
                        "messages",
                        "at least one message is needed",
                    ));
                }
                let messages = args
                    .messages
                    .into_iter()
                    .map(|m| mb_datasets::row::DialogMessage {
                        role: match m.role {
                            MessageRole::User => mb_core::Role::User,
                            MessageRole::Assistant => mb_core::Role::Assistant,
                            MessageRole::System => mb_core::Role::System,
                        },
                        content: m.content,
                        extra: Default::default(),
                    })
                    .collect();
                let added = self.memory()?.add(&owner, messages).await?;
                let added: Vec<Value> = added.iter().map(memory_json).collect();
                Ok(json!({ "added": added }))
            }
            .await,
        )
    }

    #[tool(
        description = "Search a user's memories for the ones most relevant to a query, best first.",
        input_schema = args::schema::<SearchArgs>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_memories(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        reply(async {
            let args: SearchArgs = args::parse(raw)?;
            let owner = owner(&args.user_id, &args.agent_id)?;
            let memory = self.memory()?;
            let k = page_size("limit", args.limit, memory.retrieve_k())?;
            let found = memory.search(&owner, &args.query, k).await?;
            let results: Vec<Value> = found
                .into_iter()
                .map(|(id, r)| {
                    json!({"id": id.map(|id| id.0), "doc_id": r.doc_id, "score": r.score, "text": r.text})
                })
                .collect();
            Ok(json!({ "results": results }))
        }
        .await)
    }

    #[tool(
        description = "Get one memory of a user by its id.",
        input_schema = args::schema::<MemoryIdArgs>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_memory(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        reply((|| {
            let args: MemoryIdArgs = args::parse(raw)?;
            let owner = owner(&args.user_id, &args.agent_id)?;
            Ok(memory_json(&self.memory()?.get(&owner, args.memory_id)?))
        })())
    }

    #[tool(
        description = "List a user's memories in the order they were stored, one page at a time: pass the returned next_cursor to get the next page.",
        input_schema = args::schema::<ListArgs>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_memories(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        reply((|| {
            let args: ListArgs = args::parse(raw)?;
            let owner = owner(&args.user_id, &args.agent_id)?;
            let limit = page_size("limit", args.limit, limits::DEFAULT_PAGE)?;
            let (records, more) = self.memory()?.list(&owner, args.cursor, limit)?;
            let next = if more {
                records.last().map(|r| r.id.0)
            } else {
                None
            };
            let memories: Vec<Value> = records.iter().map(memory_json).collect();
            Ok(json!({ "memories": memories, "next_cursor": next }))
        })())
    }

    #[tool(
        description = "Replace the text of one memory of a user (its id and attributes stay).",
        input_schema = args::schema::<UpdateArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn update_memory(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        reply(
            async {
                let args: UpdateArgs = args::parse(raw)?;
                let owner = owner(&args.user_id, &args.agent_id)?;
                if args.text.trim().is_empty() {
                    return Err(McpError::invalid("text", "must not be empty"));
                }
                let record = self
                    .memory()?
                    .update(&owner, args.memory_id, &args.text)
                    .await?;
                Ok(memory_json(&record))
            }
            .await,
        )
    }

    #[tool(
        description = "Delete one memory of a user by its id.",
        input_schema = args::schema::<MemoryIdArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_memory(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        reply(
            async {
                let args: MemoryIdArgs = args::parse(raw)?;
                let owner = owner(&args.user_id, &args.agent_id)?;
                let deleted = self.memory()?.delete(&owner, args.memory_id).await?;
                Ok(json!({ "deleted": deleted }))
            }
            .await,
        )
    }

    #[tool(
        description = "Delete every memory of a user, including their agents' memories of them.",
        input_schema = args::schema::<UserArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_all_memories(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        reply(
            async {
                let args: UserArgs = args::parse(raw)?;
                check_id("user_id", &args.user_id)?;
                let dropped = self.memory()?.delete_user(&args.user_id).await?;
                Ok(json!({ "deleted_namespaces": dropped }))
            }
            .await,
        )
    }

    #[tool(
        description = "The log of memory changes (ADD, UPDATE, DELETE) for a user; only the mem0 memory system keeps one.",
        input_schema = args::schema::<OwnerArgs>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_history(&self, Parameters(raw): Parameters<JsonObject>) -> CallToolResult {
        reply((|| {
            let args: OwnerArgs = args::parse(raw)?;
            let owner = owner(&args.user_id, &args.agent_id)?;
            let events = self.memory()?.history(&owner)?;
            let events = serde_json::to_value(events).map_err(|e| McpError::Io(e.to_string()))?;
            Ok(json!({ "events": events }))
        })())
    }

    #[tool(
        description = "The server's state: the memory system, the memories stored per user, the knowledge graph's size, and the write queue (writes are applied before a call returns, so it is always 0).",
        input_schema = schema_for_empty_input(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_status(&self) -> CallToolResult {
        reply((|| {
            let memory = self.memory()?;
            let namespaces = memory.namespaces()?;
            let total: u64 = namespaces.iter().map(|(_, n)| n).sum();
            let per_namespace: Vec<Value> = namespaces
                .iter()
                .map(|(name, count)| json!({"namespace": name, "memories": count}))
                .collect();
            let (entities, relations) = self
                .graph()?
                .read(|g| (g.entities.len(), g.relations.len()))?;
            Ok(json!({
                "memory_system": memory.system(),
                "queue_depth": 0,
                "memories": total,
                "namespaces": per_namespace,
                "graph": {"entities": entities, "relations": relations},
            }))
        })())
    }
}
