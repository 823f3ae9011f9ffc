//! Every size the server accepts from outside, bounded here, and the checks that enforce them.

use crate::error::McpError;

/// Longest string argument (an entity name, an observation, a message), in bytes.
pub const MAX_STRING_BYTES: usize = 16 * 1024;
/// Most items in one array argument (entities, relations, names, messages, ...).
pub const MAX_ITEMS_PER_CALL: usize = 1_000;
/// Most entities a knowledge graph holds unless `--max-entities` says otherwise.
pub const MAX_ENTITIES: usize = 100_000;
/// Most relations a knowledge graph holds unless `--max-relations` says otherwise.
pub const MAX_RELATIONS: usize = 200_000;
/// The largest bound `--max-entities` and `--max-relations` accept: a graph lives in memory,
/// and ten million small entities already take gigabytes with their search index.
pub const MAX_GRAPH_BOUND: usize = 10_000_000;

/// Most bytes of text (names, types, observations, relation endpoints and types) one
/// knowledge graph holds unless `--max-graph-bytes` says otherwise: the graph lives in memory
/// several times over (values, search text, trigram index).
pub const MAX_GRAPH_BYTES: usize = 128 << 20;
/// Most bytes of text one `read_graph`, `search_nodes` or `open_nodes` reply carries unless
/// `--max-reply-bytes` says otherwise: a reply is built whole (its JSON text and structured
/// copy), so a larger one is read in pages.
pub const MAX_REPLY_BYTES: usize = 16 << 20;
/// The largest `--max-graph-bytes` and `--max-reply-bytes` accept.
pub const MAX_BYTES_BOUND: usize = 16 << 30;
/// Most items (`read_graph`) or entities (`search_nodes`) one page holds.
pub const MAX_GRAPH_PAGE: usize = 1_000;
/// Page size of a paged graph read that names a cursor and no `limit`.
pub const DEFAULT_GRAPH_PAGE: usize = 100;

/// How large one knowledge graph, and one reply about it, may grow: settings, so that a server
/// with the memory for it (or a load benchmark) can hold more than the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphBounds {
    /// Most entities.
    pub max_entities: usize,
    /// Most relations.
    pub max_relations: usize,
    /// Most bytes of text in the graph.
    pub max_bytes: usize,
    /// Most bytes of text in one reply (a page always holds at least one item).
    pub max_reply_bytes: usize,
}

impl GraphBounds {
    /// Fails when `more` bytes of text would take a graph holding `bytes` over its bound.
    pub fn check_growth(&self, bytes: usize, more: usize) -> Result<(), McpError> {
        check_total(
            "bytes of text in the graph (--max-graph-bytes)",
            bytes.saturating_add(more),
            self.max_bytes,
        )
    }
}

impl Default for GraphBounds {
    fn default() -> Self {
        GraphBounds {
            max_entities: MAX_ENTITIES,
            max_relations: MAX_RELATIONS,
            max_bytes: MAX_GRAPH_BYTES,
            max_reply_bytes: MAX_REPLY_BYTES,
        }
    }
}
/// Most observations one entity holds.
pub const MAX_OBSERVATIONS_PER_ENTITY: usize = 1_000;
/// Largest page `list_memories` returns, and the largest `limit` of `search_memories`.
pub const MAX_PAGE: usize = 100;
/// Page size when none is asked for.
pub const DEFAULT_PAGE: usize = 20;
/// Longest user or agent id, in bytes.
pub const MAX_ID_BYTES: usize = 128;
/// Largest HTTP request body, in bytes.
pub const MAX_HTTP_BODY: usize = 4 * 1024 * 1024;
/// Longest wait, in seconds, for a request's headers to arrive whole (then the connection is
/// closed) and then for its body (then 408): `--http-deadline-secs`.
pub const HTTP_DEADLINE_SECS: u64 = 30;
/// How long a stopping HTTP server waits for the requests in flight.
pub const HTTP_SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);
/// Most HTTP sessions open at once (over all tenants).
pub const MAX_SESSIONS: usize = 10_000;
/// Most HTTP sessions one tenant keeps open (`--max-sessions-per-tenant`), so that no tenant
/// can fill [`MAX_SESSIONS`] alone.
pub const MAX_SESSIONS_PER_TENANT: u32 = 1_000;
/// Seconds after which an HTTP session nobody used is closed (`--session-idle-secs`; the
/// protocol library's own keep-alive).
pub const SESSION_IDLE_SECS: u64 = 300;
/// Most messages in one `add_memory` call.
pub const MAX_MESSAGES_PER_ADD: usize = 200;
/// Most jobs waiting in the ingest queue of one tenant; more `add_memory` calls are refused
/// until it drains.
pub const MAX_QUEUED_PER_TENANT: usize = 10_000;
/// Longest line of a tenant export read by `memorybench-mcp import`: a record of the engine's
/// largest text (8 MiB) with its body, escaped.
pub const MAX_EXPORT_LINE_BYTES: usize = 64 * 1024 * 1024;
/// Longest stdio message (one JSON-RPC line), in bytes.
pub const MAX_STDIO_LINE: usize = 4 * 1024 * 1024;

/// Fails when `count` exceeds `max` for `what`.
pub fn check_total(what: &str, count: usize, max: usize) -> Result<(), McpError> {
    if count > max {
        return Err(McpError::Limit(format!(
            "{what}: {count} would exceed the maximum of {max}"
        )));
    }
    Ok(())
}

/// Fails when the array argument `field` has more than [`MAX_ITEMS_PER_CALL`] items.
pub fn check_items<T>(field: &str, items: &[T]) -> Result<(), McpError> {
    if items.len() > MAX_ITEMS_PER_CALL {
        return Err(McpError::invalid(
            field,
            format!(
                "{} items, more than the maximum of {MAX_ITEMS_PER_CALL}",
                items.len()
            ),
        ));
    }
    Ok(())
}

/// Fails when the string argument `field` is longer than [`MAX_STRING_BYTES`].
pub fn check_string(field: &str, value: &str) -> Result<(), McpError> {
    if value.len() > MAX_STRING_BYTES {
        return Err(McpError::invalid(
            field,
            format!(
                "{} bytes, more than the maximum of {MAX_STRING_BYTES}",
                value.len()
            ),
        ));
    }
    Ok(())
}
