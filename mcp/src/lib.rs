//! `memorybench-mcp`: a Model Context Protocol server for agent memory on the embedded
//! memorybench engine, built on the official Rust SDK (`rmcp`).
//!
//! - [`graph`]: a drop-in replacement for `@modelcontextprotocol/server-memory`: the same nine
//!   knowledge-graph tools with the same inputs and outputs, the graph stored natively in an
//!   engine namespace.
//! - [`memory`]: memory tools (add, search, get, list, update, delete, delete a user, history,
//!   status) over any memory system of `mb_baselines::registry`, one namespace per user.
//! - [`transport`]: stdio and Streamable HTTP (behind a guard: tenants by bearer token,
//!   per-tenant concurrency, bounded bodies); `cli`: the command line ([`Cli`]);
//!   `tenants_file`: the configuration file of tenants ([`digest_hex`] hashes a token as it
//!   stores them); `tenant`: whose namespaces a call reaches; [`transfer`]: moving a tenant
//!   between stores; `server`: the tool routers joined into one MCP server.
//!
//! Every argument is parsed from a typed struct (`tool_input`, which also gives the tool's input
//! schema) and bounded ([`limits`]); every failure is a tool error naming what is wrong
//! ([`McpError`]).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod cli;
mod error;
mod graph;
pub mod limits;
mod memory;
mod server;
mod tenant;
mod tenants_file;
mod tool_input;
pub mod transfer;
pub mod transport;

pub use cli::Cli;
pub use error::McpError;
pub use graph::import::import_jsonl;
pub use server::{Backends, Server};
pub use tenants_file::digest_hex;
