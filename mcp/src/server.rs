//! The MCP server: the knowledge-graph tools and the memory tools on one engine.

use std::sync::Arc;

use mb_engine::Engine;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    ErrorData, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use rmcp::{tool_handler, ServerHandler};

use crate::error::McpError;
use crate::graph::store::GraphStore;
use crate::memory::service::{MemoryConfig, MemoryService};

/// Namespace holding the knowledge graph unless told otherwise.
pub const DEFAULT_GRAPH_NAMESPACE: &str = "mcp/graph";

/// What the server serves, shared by every connection.
pub struct Backends {
    graph: GraphStore,
    memory: Result<MemoryService, String>,
}

impl Backends {
    /// Opens the graph in `graph_namespace` of `engine` and sets up the memory system of
    /// `memory`. A memory system that cannot be set up (a model server that does not start)
    /// does not stop the server: the memory tools report why, the graph tools work.
    pub fn open(
        engine: Arc<Engine>,
        graph_namespace: &str,
        memory: &MemoryConfig,
    ) -> Result<Backends, McpError> {
        let graph = GraphStore::open(engine.clone(), graph_namespace)?;
        // The registry name is checked here, so a typo stops the server at once.
        mb_baselines::registry::get(&memory.system)?;
        let memory = MemoryService::new(engine, memory).map_err(|e| e.to_string());
        if let Err(e) = &memory {
            tracing::warn!("memory tools unavailable: {e}");
        }
        Ok(Backends { graph, memory })
    }

    /// The knowledge graph.
    pub fn graph(&self) -> &GraphStore {
        &self.graph
    }
}

/// One MCP session's handler (cheap to clone: the backends are shared).
#[derive(Clone)]
pub struct Server {
    backends: Arc<Backends>,
    tool_router: ToolRouter<Server>,
}

impl Server {
    /// A handler over `backends`.
    pub fn new(backends: Arc<Backends>) -> Server {
        Server {
            backends,
            tool_router: Self::graph_router() + Self::memory_router(),
        }
    }

    pub(crate) fn graph(&self) -> Result<&GraphStore, McpError> {
        Ok(&self.backends.graph)
    }

    pub(crate) fn memory(&self) -> Result<&MemoryService, McpError> {
        self.backends
            .memory
            .as_ref()
            .map_err(|e| McpError::Config(e.clone()))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            "memorybench-mcp",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "Long-term memory. Knowledge-graph tools (create_entities, create_relations, \
                 add_observations, search_nodes, open_nodes, read_graph and the deletes) keep \
                 entities and facts; memory tools (add_memory, search_memories, list_memories, \
                 ...) remember dialogs per user_id.",
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            crate::graph::resource::listed(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        crate::graph::resource::read(&self.backends.graph, &request.uri).map(Into::into)
    }
}
