//! `memorybench-mcp`: a Model Context Protocol server for agent memory on the embedded
//! memorybench engine, built on the official Rust SDK (`rmcp`).
//!
//! - [`graph`]: a drop-in replacement for `@modelcontextprotocol/server-memory`: the same nine
//!   knowledge-graph tools with the same inputs and outputs, the graph stored natively in an
//!   engine namespace.
//! - [`memory`]: memory tools (add, search, get, list, update, delete, delete a user, history,
//!   status) over any memory system of `mb_baselines::registry`, one namespace per user.
//! - [`transport`]: stdio and Streamable HTTP (behind a guard: tenants by bearer token,
//!   per-tenant concurrency, bounded bodies); [`config`]: the command line; [`auth`]: the
//!   configuration file of tenants; [`tenant`]: whose namespaces a call reaches; [`transfer`]:
//!   moving a tenant between stores.
//!
//! Every argument is parsed from a typed struct (which also gives the tool's input schema) and
//! bounded ([`limits`]); every failure is a tool error naming what is wrong ([`error`]).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod args;
pub mod auth;
pub mod config;
pub mod error;
pub mod graph;
pub mod limits;
pub mod memory;
pub mod server;
pub mod tenant;
pub mod transfer;
pub mod transport;

pub use config::Cli;
pub use error::McpError;
pub use server::{Backends, Server};
