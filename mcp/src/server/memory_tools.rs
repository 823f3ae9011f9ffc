//! The memory tools: add, search, get, list (paged), update, delete one, delete a user, Mem0's
//! history, and the status. Arguments are typed structs (their schemas are the tools' input
//! schemas); results are JSON objects, as text and as structured content.

use rmcp::handler::server::common::schema_for_empty_input;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use serde_json::{json, Map, Value};

use crate::error::McpError;
use crate::limits;
use crate::memory::ids::MemoryIds;
use crate::memory::messages::MessageRole;
use crate::memory::Owner;
use crate::server::memory_arguments::{
    AddArgs, ListArgs, MemoryIdArgs, OwnerArgs, SearchArgs, UpdateArgs, UserArgs,
};
use crate::server::Server;
use crate::tenant::{check_name, Tenant};
use crate::tool_input;
use mb_baselines::curation::{Metadata, MetadataFilter, METADATA};

fn owner(tenant: Tenant, user_id: &str, agent_id: &Option<String>) -> Result<Owner, McpError> {
    check_name("user_id", user_id)?;
    if let Some(agent) = agent_id {
        check_name("agent_id", agent)?;
    }
    Ok(Owner {
        tenant,
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

fn memory_json(ids: &MemoryIds, record: &mb_engine::Record) -> Value {
    let mut attributes = record.attributes.clone();
    attributes.remove(METADATA);
    json!({
        "id": ids.shown(record.id),
        "text": record.content(),
        "metadata": Metadata::of(record),
        "created_at_ms": record.created_at_ms,
        "attributes": attributes,
    })
}

/// Checked metadata of argument `field`.
fn metadata(field: &str, value: Option<Map<String, Value>>) -> Result<Option<Metadata>, McpError> {
    value
        .map(|v| Metadata::new(Value::Object(v), field))
        .transpose()
        .map_err(|e| McpError::invalid(field, e.to_string()))
}

/// The compiled `filters` argument.
fn filter(filters: Option<Map<String, Value>>) -> Result<Option<MetadataFilter>, McpError> {
    match filters {
        Some(filters) => MetadataFilter::compile(&Value::Object(filters), "filters")
            .map_err(|e| McpError::invalid("filters", e.to_string())),
        None => Ok(None),
    }
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
        description = "Remember a dialog for a user (and optionally an agent). Returns once the dialog is queued durably; it is searchable at once (as pending) and the memory system memorizes it in the background. With wait: true, returns the memories made of it.",
        input_schema = tool_input::schema::<AddArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn add_memory(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        reply(
            async {
                let args: AddArgs = tool_input::parse(raw)?;
                let owner = owner(self.tenant(&ctx)?, &args.user_id, &args.agent_id)?;
                let messages = args.messages.into_messages();
                if messages.is_empty() || messages.iter().all(|m| m.content.trim().is_empty()) {
                    return Err(McpError::invalid(
                        "messages",
                        "at least one message is needed",
                    ));
                }
                if messages.len() > limits::MAX_MESSAGES_PER_ADD {
                    return Err(McpError::Limit(format!(
                        "messages: {} in one call, more than the maximum of {}",
                        messages.len(),
                        limits::MAX_MESSAGES_PER_ADD
                    )));
                }
                let messages = messages
                    .into_iter()
                    .map(|m| mb_core::Message {
                        role: match m.role {
                            MessageRole::User => mb_core::Role::User,
                            MessageRole::Assistant => mb_core::Role::Assistant,
                            MessageRole::System => mb_core::Role::System,
                        },
                        content: m.content,
                    })
                    .collect();
                let metadata = metadata("metadata", args.metadata)?;
                let memory = self.memory()?;
                let ids = memory.ids(&owner.tenant)?;
                let queued = memory.enqueue(&owner, messages, metadata.as_ref(), args.wait)?;
                let job_id = ids.shown(mb_engine::RecordId(queued.job_id));
                let Some(outcome) = queued.outcome else {
                    return Ok(json!({
                        "queued": true,
                        "job_id": job_id,
                        "queue_depth": queued.queue_depth,
                    }));
                };
                let added = outcome
                    .await
                    .map_err(|_| McpError::Io("the server stopped before memorizing".into()))?
                    .map_err(McpError::Io)?;
                let added: Vec<Value> = added.iter().map(|r| memory_json(&ids, r)).collect();
                Ok(json!({ "queued": true, "job_id": job_id, "added": added }))
            }
            .await,
        )
    }

    #[tool(
        description = "Search a user's memories for the ones most relevant to a query, best first. Without agent_id, the search also covers the memories the user's agents keep of them (each result names its agent_id); with agent_id, only that agent's.",
        input_schema = tool_input::schema::<SearchArgs>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_memories(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        reply(async {
            let args: SearchArgs = tool_input::parse(raw)?;
            let owner = owner(self.tenant(&ctx)?, &args.user_id, &args.agent_id)?;
            let memory = self.memory()?;
            let ids = memory.ids(&owner.tenant)?;
            let k = page_size("limit", args.limit, memory.retrieve_k())?;
            let filter = filter(args.filters)?;
            // The queue first: a worker memorizes a dialog before it leaves the queue, so a
            // dialog applied between the two searches is found by the second (searching the
            // memories first could miss it in both).
            let pending: Vec<Value> = memory
                .search_queued(&owner, &args.query, k, filter.as_ref())?
                .into_iter()
                .map(|hit| json!({"job_id": ids.shown(hit.record.id), "score": hit.score, "text": hit.record.text}))
                .collect();
            let found = memory.search(&owner, &args.query, k, filter.as_ref()).await?;
            let results: Vec<Value> = found
                .into_iter()
                .map(|(agent, found)| {
                    let r = found.retrieved;
                    let metadata = found.record.as_ref().map(Metadata::of);
                    json!({"id": found.record.map(|r| ids.shown(r.id)), "agent_id": agent, "doc_id": r.doc_id, "score": r.score, "text": r.text, "metadata": metadata})
                })
                .collect();
            Ok(json!({ "results": results, "pending": pending }))
        }
        .await)
    }

    #[tool(
        description = "Get one memory of a user by its id.",
        input_schema = tool_input::schema::<MemoryIdArgs>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_memory(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        reply((|| {
            let args: MemoryIdArgs = tool_input::parse(raw)?;
            let owner = owner(self.tenant(&ctx)?, &args.user_id, &args.agent_id)?;
            let memory = self.memory()?;
            let ids = memory.ids(&owner.tenant)?;
            let owner = memory.owning(&owner, args.memory_id)?;
            Ok(memory_json(&ids, &memory.get(&owner, args.memory_id)?))
        })())
    }

    #[tool(
        description = "List a user's memories in the order they were stored, one page at a time: pass the returned next_cursor to get the next page. With filters, only memories whose metadata match.",
        input_schema = tool_input::schema::<ListArgs>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_memories(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        reply((|| {
            let args: ListArgs = tool_input::parse(raw)?;
            let owner = owner(self.tenant(&ctx)?, &args.user_id, &args.agent_id)?;
            let limit = page_size("limit", args.limit, limits::DEFAULT_PAGE)?;
            let memory = self.memory()?;
            let ids = memory.ids(&owner.tenant)?;
            let filter = filter(args.filters)?;
            let (records, more) = memory.list(&owner, args.cursor, limit, filter.as_ref())?;
            let next = records.last().filter(|_| more).map(|r| ids.shown(r.id));
            let memories: Vec<Value> = records.iter().map(|r| memory_json(&ids, r)).collect();
            Ok(json!({ "memories": memories, "next_cursor": next }))
        })())
    }

    #[tool(
        description = "Replace the text of one memory of a user (its id and attributes stay).",
        input_schema = tool_input::schema::<UpdateArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn update_memory(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        reply(
            async {
                let args: UpdateArgs = tool_input::parse(raw)?;
                let owner = owner(self.tenant(&ctx)?, &args.user_id, &args.agent_id)?;
                if args.text.trim().is_empty() {
                    return Err(McpError::invalid("text", "must not be empty"));
                }
                let memory = self.memory()?;
                let ids = memory.ids(&owner.tenant)?;
                let owner = memory.owning(&owner, args.memory_id)?;
                let metadata = metadata("metadata", args.metadata)?;
                let record = memory
                    .update(&owner, args.memory_id, &args.text, metadata.as_ref())
                    .await?;
                Ok(memory_json(&ids, &record))
            }
            .await,
        )
    }

    #[tool(
        description = "Delete one memory of a user by its id.",
        input_schema = tool_input::schema::<MemoryIdArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_memory(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        reply(
            async {
                let args: MemoryIdArgs = tool_input::parse(raw)?;
                let owner = owner(self.tenant(&ctx)?, &args.user_id, &args.agent_id)?;
                let memory = self.memory()?;
                let owner = memory.owning(&owner, args.memory_id)?;
                let deleted = memory.delete(&owner, args.memory_id).await?;
                Ok(json!({ "deleted": deleted }))
            }
            .await,
        )
    }

    #[tool(
        description = "Delete every memory of a user, including their agents' memories of them.",
        input_schema = tool_input::schema::<UserArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_all_memories(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        reply(
            async {
                let args: UserArgs = tool_input::parse(raw)?;
                check_name("user_id", &args.user_id)?;
                let tenant = self.tenant(&ctx)?;
                let forgotten = self.memory()?.delete_user(&tenant, &args.user_id).await?;
                Ok(json!({
                    "deleted_namespaces": forgotten.namespaces,
                    "deleted_queued": forgotten.queued,
                    "compacted": true,
                }))
            }
            .await,
        )
    }

    #[tool(
        description = "The log of memory changes (ADD, UPDATE, DELETE) for a user; only the mem0 memory system keeps one.",
        input_schema = tool_input::schema::<OwnerArgs>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_history(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        reply((|| {
            let args: OwnerArgs = tool_input::parse(raw)?;
            let owner = owner(self.tenant(&ctx)?, &args.user_id, &args.agent_id)?;
            let memory = self.memory()?;
            let ids = memory.ids(&owner.tenant)?;
            let events: Vec<Value> = memory
                .history_of_records(&owner)?
                .into_iter()
                .map(|(record, e)| {
                    json!({
                        "memory_id": record.map(|id| ids.shown(id)),
                        "doc_id": e.memory,
                        "event": e.event,
                        "old_memory": e.old_memory,
                        "new_memory": e.new_memory,
                        "at_ms": e.at_ms,
                    })
                })
                .collect();
            Ok(json!({ "events": events }))
        })())
    }

    #[tool(
        description = "The server's state for this tenant: the memory system, the memories stored per user, the knowledge graph's size, and the ingest queue (dialogs waiting to be memorized, being memorized, failed).",
        input_schema = schema_for_empty_input(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_status(&self, ctx: RequestContext<RoleServer>) -> CallToolResult {
        reply((|| {
            let tenant = self.tenant(&ctx)?;
            let memory = self.memory()?;
            let namespaces = memory.namespaces(&tenant)?;
            let (queued, running, failed) = memory
                .scheduler
                .depth(tenant.name(), &memory.tenant_prefix(&tenant));
            let total: u64 = namespaces.iter().map(|(_, n)| n).sum();
            let per_namespace: Vec<Value> = namespaces
                .iter()
                .map(|(name, count)| json!({"namespace": name, "memories": count}))
                .collect();
            let (entities, relations) = self
                .graph(&ctx)?
                .read(|g| (g.entities.len(), g.relations.len()))?;
            Ok(json!({
                "memory_system": memory.system(),
                "queue_depth": queued + running,
                "queue": {"waiting": queued, "running": running, "failed": failed},
                "memories": total,
                "namespaces": per_namespace,
                "graph": {"entities": entities, "relations": relations},
            }))
        })())
    }
}
