//! The MCP server: the knowledge-graph tools and the memory tools on one engine, each call
//! for one tenant (the local one on stdio; over HTTP the one the guard authenticated). Each set
//! of tools is a router of its own over [`crate::graph`] and [`crate::memory`]
//! (`graph_tools`, `memory_tools` with its arguments in `memory_arguments`), joined here.

mod graph_tools;
mod memory_arguments;
mod memory_tools;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
use crate::limits::GraphBounds;
use crate::memory::service::{MemoryConfig, MemoryService};
use crate::tenant::Tenant;

/// Namespace holding the knowledge graph unless told otherwise.
pub const DEFAULT_GRAPH_NAMESPACE: &str = "mcp/graph";

/// What the server serves, shared by every connection.
pub struct Backends {
    engine: Arc<Engine>,
    local_graph: Arc<GraphStore>,
    graphs: Mutex<HashMap<String, Arc<GraphStore>>>,
    memory: Result<Arc<MemoryService>, String>,
}

/// How a session reached the server, which decides whose calls it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Standard input and output: the local tenant.
    Stdio,
    /// Streamable HTTP: the tenant the HTTP guard attached to each request (a request
    /// without one is refused).
    Http,
}

impl Backends {
    /// Opens the graph in `graph_namespace` of `engine` (every tenant's graph may grow to
    /// `graph_bounds`) and sets up the memory system of
    /// `memory`. A memory system that cannot be set up (a model server that does not start)
    /// does not stop the server: the memory tools report why, the graph tools work.
    pub fn open(
        engine: Arc<Engine>,
        graph_namespace: &str,
        graph_bounds: GraphBounds,
        memory: &MemoryConfig,
    ) -> Result<Backends, McpError> {
        let local_graph = Arc::new(GraphStore::open(
            engine.clone(),
            graph_namespace,
            graph_bounds,
        )?);
        // The registry name is checked here, so a typo stops the server at once.
        mb_baselines::registry::get(&memory.system)?;
        let memory = MemoryService::new(engine.clone(), memory)
            .map(Arc::new)
            .map_err(|e| e.to_string());
        if let Err(e) = &memory {
            tracing::warn!("memory tools unavailable: {e}");
        }
        Ok(Backends {
            engine,
            local_graph,
            graphs: Mutex::new(HashMap::new()),
            memory,
        })
    }

    /// The local tenant's knowledge graph (stdio, and HTTP without tenants).
    pub fn graph(&self) -> &GraphStore {
        &self.local_graph
    }

    /// The knowledge graph of `tenant` (in `mcp/t/{tenant}/graph`, opened on first use).
    pub fn graph_of(&self, tenant: &Tenant) -> Result<Arc<GraphStore>, McpError> {
        if tenant.is_local() {
            return Ok(self.local_graph.clone());
        }
        let mut graphs = self
            .graphs
            .lock()
            .map_err(|_| McpError::Io("the graph table lock is poisoned".into()))?;
        if let Some(found) = graphs.get(tenant.name()) {
            return Ok(found.clone());
        }
        let namespace = format!("mcp/t/{}/graph", tenant.name());
        let bounds = self.local_graph.bounds();
        let opened = Arc::new(GraphStore::open(self.engine.clone(), &namespace, bounds)?);
        graphs.insert(tenant.name().to_string(), opened.clone());
        Ok(opened)
    }

    /// The memory tools' backend, when it could be set up.
    pub fn memory(&self) -> Result<&Arc<MemoryService>, McpError> {
        self.memory
            .as_ref()
            .map_err(|e| McpError::Config(e.clone()))
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Closes the store (flushed and synced) when nothing else holds it.
    pub fn close(self) -> Result<(), McpError> {
        let Backends {
            engine,
            local_graph,
            graphs,
            memory,
        } = self;
        drop((local_graph, graphs, memory));
        match Arc::try_unwrap(engine) {
            Ok(engine) => Ok(engine.close()?),
            // Still shared: dropping the last handle closes it (and logs any error).
            Err(_) => Ok(()),
        }
    }
}

/// One MCP session's handler (cheap to clone: the backends are shared).
#[derive(Clone)]
pub struct Server {
    backends: Arc<Backends>,
    transport: Transport,
    tool_router: ToolRouter<Server>,
}

impl Server {
    /// A handler over `backends` for sessions on `transport`.
    pub fn new(backends: Arc<Backends>, transport: Transport) -> Server {
        Server {
            backends,
            transport,
            tool_router: Self::graph_router() + Self::memory_router(),
        }
    }

    /// The tenant a request is for: the local one on stdio; over HTTP the one the guard
    /// attached (none: refused, never a default).
    pub(crate) fn tenant(&self, context: &RequestContext<RoleServer>) -> Result<Tenant, McpError> {
        match self.transport {
            Transport::Stdio => Ok(Tenant::local()),
            Transport::Http => context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Tenant>())
                .cloned()
                .ok_or(McpError::Unauthenticated),
        }
    }

    pub(crate) fn graph(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Arc<GraphStore>, McpError> {
        self.backends.graph_of(&self.tenant(context)?)
    }

    pub(crate) fn memory(&self) -> Result<&Arc<MemoryService>, McpError> {
        self.backends.memory()
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
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let graph = self
            .graph(&context)
            .map_err(|e| ErrorData::invalid_request(e.to_string(), None))?;
        crate::graph::resource::read(&graph, &request.uri).map(Into::into)
    }
}
