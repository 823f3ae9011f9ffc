//! The server's errors. Every one reaches the client as a tool error (`isError: true` with the
//! message as text), never as a crash.

use rmcp::model::{CallToolResult, ContentBlock};

/// What can go wrong serving a tool call or starting the server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// An argument is missing, of the wrong type or out of range; `field` is its JSON path.
    #[error("invalid argument `{field}`: {message}")]
    InvalidArgument {
        /// The argument's path (`messages[2].role`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// Something the call names does not exist (the message is the reference server's when it
    /// has one).
    #[error("{0}")]
    NotFound(String),
    /// A size bound would be exceeded.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// The storage engine failed.
    #[error("engine: {0}")]
    Engine(#[from] mb_engine::Error),
    /// The memory system failed.
    #[error("memory system: {0}")]
    Memory(#[from] mb_baselines::MemoryError),
    /// The server is configured wrongly (unknown system, missing embedder, ...).
    #[error("configuration: {0}")]
    Config(String),
    /// A request reached a tool without an authenticated tenant.
    #[error("unauthenticated")]
    Unauthenticated,
    /// The ingest queue of the tenant is full; retry later.
    #[error("busy: {0}")]
    Busy(String),
    /// A transport or I/O failure.
    #[error("{0}")]
    Io(String),
}

impl McpError {
    /// An invalid-argument error for `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> McpError {
        McpError::InvalidArgument {
            field: field.into(),
            message: message.into(),
        }
    }

    /// Whether the store's disk is full: the operation may succeed unchanged once space is
    /// free (the engine resumes writes by itself), so a queued job waits instead of failing.
    pub fn is_storage_full(&self) -> bool {
        matches!(
            self,
            McpError::Engine(mb_engine::Error::StorageFull { .. })
                | McpError::Memory(mb_baselines::MemoryError::Engine(
                    mb_engine::Error::StorageFull { .. }
                ))
        )
    }

    /// The error as a tool result the client shows its model.
    pub fn into_tool_result(self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.to_string())])
    }
}
