//! The nine tools of `@modelcontextprotocol/server-memory`, with its names, titles,
//! descriptions, annotations, input and output schemas, and results: the text is the result's
//! JSON indented by two spaces (JavaScript's `JSON.stringify(result, null, 2)`), the structured
//! content the same object the reference returns.

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::McpError;
use crate::graph::model::{
    AddedObservations, Entity, KnowledgeGraph, ObservationAddition, ObservationDeletion, Relation,
};
use crate::graph::ops::Graph;
use crate::graph::page::{GraphPage, PageRequest};
use crate::server::Server;
use crate::tool_input;

/// Arguments and result of `create_entities`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct EntitiesArgs {
    // The entities.
    pub entities: Vec<Entity>,
}

/// Arguments and result of `create_relations`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RelationsArgs {
    // The relations.
    pub relations: Vec<Relation>,
}

/// Arguments of `delete_relations`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct DeleteRelationsArgs {
    /// The relations to delete.
    #[schemars(description = "An array of relations to delete")]
    pub relations: Vec<Relation>,
}

/// Arguments of `add_observations`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct AddObservationsArgs {
    // What to add to which entity.
    pub observations: Vec<ObservationAddition>,
}

/// Result of `add_observations`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct AddObservationsResult {
    // What was added to each entity.
    pub results: Vec<AddedObservations>,
}

/// Arguments of `delete_entities`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeleteEntitiesArgs {
    /// The names of the entities to delete.
    #[schemars(description = "An array of entity names to delete")]
    pub entity_names: Vec<String>,
}

/// Arguments of `delete_observations`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct DeleteObservationsArgs {
    // What to delete from which entity.
    pub deletions: Vec<ObservationDeletion>,
}

/// Arguments of `read_graph`: none for the reference's whole graph, or a page. Unknown
/// fields are refused, so a misspelt `limit` cannot return the whole graph unasked.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadGraphArgs {
    /// Where to go on.
    #[schemars(
        description = "Optional: the nextCursor of the previous page, to read the graph in pages"
    )]
    pub cursor: Option<String>,
    /// Page size.
    #[schemars(
        description = "Optional: most items (entities, then relations) in the page, 1 to 1000 (default 100 when a cursor is given); without limit and cursor the whole graph is returned"
    )]
    pub limit: Option<u32>,
}

/// Arguments of `search_nodes`: the reference's query, and optionally a page.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchNodesArgs {
    /// The text to look for.
    #[schemars(
        description = "The search query to match against entity names, types, and observation content"
    )]
    pub query: String,
    /// Where to go on.
    #[schemars(description = "Optional: the nextCursor of the previous page of this search")]
    pub cursor: Option<String>,
    /// Page size.
    #[schemars(
        description = "Optional: most matching entities in the page (each with its relations), 1 to 1000 (default 100 when a cursor is given); without limit and cursor every match is returned"
    )]
    pub limit: Option<u32>,
}

/// Arguments of `open_nodes`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OpenNodesArgs {
    /// The names of the entities to return.
    #[schemars(description = "An array of entity names to retrieve")]
    pub names: Vec<String>,
}

/// Result of the delete tools.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Deleted {
    // Always true.
    pub success: bool,
    // What was deleted.
    pub message: String,
}

/// The result the reference returns for `value`: its indented JSON as text, and the object
/// as structured content.
fn reply<T: Serialize>(value: &T, structured: serde_json::Value) -> CallToolResult {
    match serde_json::to_string_pretty(value) {
        Ok(text) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(structured);
            result
        }
        Err(e) => McpError::Io(e.to_string()).into_tool_result(),
    }
}

fn deleted(message: &str) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(message)]);
    result.structured_content = Some(serde_json::json!({"success": true, "message": message}));
    result
}

fn finish(outcome: Result<CallToolResult, McpError>) -> CallToolResult {
    outcome.unwrap_or_else(McpError::into_tool_result)
}

impl Server {
    /// Runs `op` on the caller's graph; a change returns once it is durable (a synced log
    /// write, its own or a group's), awaited without holding a worker thread.
    async fn mutate_graph<R>(
        &self,
        ctx: &RequestContext<RoleServer>,
        op: impl FnOnce(&mut Graph) -> Result<R, McpError>,
    ) -> Result<R, McpError> {
        self.graph(ctx)?.mutate_async(op).await
    }
}

#[tool_router(router = graph_router, vis = "pub(crate)")]
impl Server {
    #[tool(
        title = "Create Entities",
        description = "Create multiple new entities in the knowledge graph",
        input_schema = tool_input::schema::<EntitiesArgs>(),
        output_schema = schema_for_output::<EntitiesArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn create_entities(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish(
            async {
                let args: EntitiesArgs = tool_input::parse(raw)?;
                let new = self
                    .mutate_graph(&ctx, move |g| g.create_entities(args.entities))
                    .await?;
                Ok(reply(&new, serde_json::json!({ "entities": new })))
            }
            .await,
        )
    }

    #[tool(
        title = "Create Relations",
        description = "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice",
        input_schema = tool_input::schema::<RelationsArgs>(),
        output_schema = schema_for_output::<RelationsArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn create_relations(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish(
            async {
                let args: RelationsArgs = tool_input::parse(raw)?;
                let new = self
                    .mutate_graph(&ctx, move |g| g.create_relations(args.relations))
                    .await?;
                Ok(reply(&new, serde_json::json!({ "relations": new })))
            }
            .await,
        )
    }

    #[tool(
        title = "Add Observations",
        description = "Add new observations to existing entities in the knowledge graph",
        input_schema = tool_input::schema::<AddObservationsArgs>(),
        output_schema = schema_for_output::<AddObservationsResult>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn add_observations(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish(
            async {
                let args: AddObservationsArgs = tool_input::parse(raw)?;
                let added = self
                    .mutate_graph(&ctx, move |g| g.add_observations(args.observations))
                    .await?;
                Ok(reply(&added, serde_json::json!({ "results": added })))
            }
            .await,
        )
    }

    #[tool(
        title = "Delete Entities",
        description = "Delete multiple entities and their associated relations from the knowledge graph",
        input_schema = tool_input::schema::<DeleteEntitiesArgs>(),
        output_schema = schema_for_output::<Deleted>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_entities(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish(
            async {
                let args: DeleteEntitiesArgs = tool_input::parse(raw)?;
                self.mutate_graph(&ctx, move |g| {
                    g.delete_entities(&args.entity_names);
                    Ok(())
                })
                .await?;
                Ok(deleted("Entities deleted successfully"))
            }
            .await,
        )
    }

    #[tool(
        title = "Delete Observations",
        description = "Delete specific observations from entities in the knowledge graph",
        input_schema = tool_input::schema::<DeleteObservationsArgs>(),
        output_schema = schema_for_output::<Deleted>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_observations(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish(
            async {
                let args: DeleteObservationsArgs = tool_input::parse(raw)?;
                self.mutate_graph(&ctx, move |g| {
                    g.delete_observations(&args.deletions);
                    Ok(())
                })
                .await?;
                Ok(deleted("Observations deleted successfully"))
            }
            .await,
        )
    }

    #[tool(
        title = "Delete Relations",
        description = "Delete multiple relations from the knowledge graph",
        input_schema = tool_input::schema::<DeleteRelationsArgs>(),
        output_schema = schema_for_output::<Deleted>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_relations(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish(
            async {
                let args: DeleteRelationsArgs = tool_input::parse(raw)?;
                self.mutate_graph(&ctx, move |g| {
                    g.delete_relations(&args.relations);
                    Ok(())
                })
                .await?;
                Ok(deleted("Relations deleted successfully"))
            }
            .await,
        )
    }

    #[tool(
        title = "Read Graph",
        description = "Read the entire knowledge graph",
        input_schema = tool_input::schema::<ReadGraphArgs>(),
        output_schema = schema_for_output::<GraphPage>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn read_graph(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish((|| {
            let args: ReadGraphArgs = tool_input::parse(raw)?;
            let page = PageRequest::from_args(args.cursor.as_deref(), args.limit)?;
            let graph = self.graph(&ctx)?.read(|g| g.read_page(page))??;
            Ok(graph_reply(&graph))
        })())
    }

    #[tool(
        title = "Search Nodes",
        description = "Search for nodes in the knowledge graph based on a query",
        input_schema = tool_input::schema::<SearchNodesArgs>(),
        output_schema = schema_for_output::<GraphPage>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_nodes(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish((|| {
            let args: SearchNodesArgs = tool_input::parse(raw)?;
            let page = PageRequest::from_args(args.cursor.as_deref(), args.limit)?;
            let graph = self
                .graph(&ctx)?
                .read(|g| g.search_page(&args.query, page))??;
            Ok(graph_reply(&graph))
        })())
    }

    #[tool(
        title = "Open Nodes",
        description = "Open specific nodes in the knowledge graph by their names",
        input_schema = tool_input::schema::<OpenNodesArgs>(),
        output_schema = schema_for_output::<KnowledgeGraph>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn open_nodes(
        &self,
        Parameters(raw): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        finish((|| {
            let args: OpenNodesArgs = tool_input::parse(raw)?;
            let graph = self.graph(&ctx)?.read(|g| g.open_page(&args.names))??;
            Ok(graph_reply(&graph))
        })())
    }
}

fn graph_reply(graph: &GraphPage) -> CallToolResult {
    match serde_json::to_value(graph) {
        Ok(structured) => reply(graph, structured),
        Err(e) => McpError::Io(e.to_string()).into_tool_result(),
    }
}
