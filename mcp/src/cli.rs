//! The command line: where the store is, which transport, which memory system.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::error::McpError;
use crate::limits::{self, GraphBounds};
use crate::memory::service::MemoryConfig;
use crate::server::DEFAULT_GRAPH_NAMESPACE;

/// `memorybench-mcp`: an MCP server for agent memory on the embedded memorybench engine: a
/// drop-in for `@modelcontextprotocol/server-memory` (knowledge-graph tools) and memory tools
/// over any memory system of the registry.
#[derive(Debug, Clone, Parser)]
#[command(name = "memorybench-mcp", version)]
pub struct Cli {
    /// Without a command: serve. With one: move a tenant's data between stores (the store's
    /// server must be stopped).
    #[command(subcommand)]
    pub command: Option<TenantCommand>,
    /// The engine store (a directory, created when missing). Default: $MEMORYBENCH_MCP_STORE,
    /// else $XDG_DATA_HOME/memorybench/mcp-store (~/.local/share/memorybench/mcp-store).
    #[arg(long, value_name = "DIR", global = true)]
    pub store: Option<PathBuf>,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is HOST:PORT or a PORT
    /// (bound to 127.0.0.1); port 0 picks a free one.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Allow --http to bind an address other than loopback (then also name the accepted Host
    /// headers with --allowed-host).
    #[arg(long)]
    pub allow_remote: bool,
    /// A Host header the HTTP transport accepts (repeatable; default: loopback names only).
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// The memory system of the memory tools (a registry name).
    #[arg(long, default_value = "hybrid", value_name = "NAME")]
    pub memory_system: String,
    /// The embedder of systems that embed: onnx (in-process all-MiniLM-L6-v2, from
    /// scripts/setup.sh), hashing (no model), or a model's directory or name under
    /// .cache/models/. Default: the system's settings (the hybrid memory's bge-small-en-v1.5).
    #[arg(long, value_name = "NAME")]
    pub embedder: Option<String>,
    /// The model behind memory operations: offline (no model), local (the llama.cpp server of
    /// configs/llm/local.toml) or a role-settings file.
    #[arg(long, default_value = "offline", value_name = "LLM")]
    pub llm: String,
    /// Import the reference server's graph file (its MEMORY_FILE_PATH, memory.jsonl) into the
    /// knowledge graph when the graph is empty.
    #[arg(long, value_name = "FILE")]
    pub import_jsonl: Option<PathBuf>,
    /// The namespace holding the knowledge graph (of the local tenant).
    #[arg(long, default_value = DEFAULT_GRAPH_NAMESPACE, value_name = "NAME", global = true)]
    pub graph_namespace: String,
    /// The configuration file: tenants and their hashed bearer tokens (docs/service.md).
    /// Default: none (one local tenant, no tokens over HTTP).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Most entities one knowledge graph holds (each tenant's; the graph lives in memory).
    #[arg(long, default_value_t = limits::MAX_ENTITIES, value_name = "N", value_parser = graph_bound)]
    pub max_entities: usize,
    /// Most relations one knowledge graph holds (each tenant's).
    #[arg(long, default_value_t = limits::MAX_RELATIONS, value_name = "N", value_parser = graph_bound)]
    pub max_relations: usize,
    /// Most bytes of text one knowledge graph holds (each tenant's): a count of bytes, or with
    /// a binary suffix (`512MiB`, `2GiB`).
    #[arg(long, default_value = "128MiB", value_name = "BYTES", value_parser = byte_bound)]
    pub max_graph_bytes: usize,
    /// Most bytes of text one `read_graph`, `search_nodes` or `open_nodes` reply carries; a
    /// larger graph is read in pages (`limit`, `cursor`).
    #[arg(long, default_value = "16MiB", value_name = "BYTES", value_parser = byte_bound)]
    pub max_reply_bytes: usize,
    /// Most HTTP sessions one tenant keeps open; its further `initialize` calls get 429 until
    /// some end (DELETE) or expire.
    #[arg(long, default_value_t = limits::MAX_SESSIONS_PER_TENANT, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=limits::MAX_SESSIONS as i64))]
    pub max_sessions_per_tenant: u32,
    /// Seconds after which an HTTP session with no request is closed; its id then answers 404.
    #[arg(long, default_value_t = limits::SESSION_IDLE_SECS, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub session_idle_secs: u64,
    /// Seconds a request's headers, and then its body, may take to arrive: a slower client's
    /// connection is closed (headers) or answered 408 (body).
    #[arg(long, default_value_t = limits::HTTP_DEADLINE_SECS, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub http_deadline_secs: u64,
    /// Background workers memorizing queued dialogs (LLM calls in flight at once).
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,
}

/// Commands that move one tenant between stores (docs/scale-out.md, "Moving a tenant").
#[derive(Debug, Clone, Subcommand)]
pub enum TenantCommand {
    /// Write every namespace of a tenant (memories, queue, graph) as JSON lines.
    Export {
        /// The tenant (`local` for the tenantless layout).
        #[arg(long)]
        tenant: String,
        /// The file to write (replaced only once complete); default: standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Store a tenant's export in this store (same names and record ids).
    Import {
        /// The tenant the export must belong to.
        #[arg(long)]
        tenant: String,
        /// The export to read; default: standard input.
        #[arg(long = "in", value_name = "FILE")]
        input: Option<PathBuf>,
    },
    /// Remove every namespace of a tenant from this store and compact it, so no byte of it is
    /// left (after its export is imported elsewhere).
    DropTenant {
        /// The tenant.
        #[arg(long)]
        tenant: String,
    },
}

/// A graph bound from the command line: 1 to [`limits::MAX_GRAPH_BOUND`].
fn graph_bound(text: &str) -> Result<usize, String> {
    let value: usize = text
        .parse()
        .map_err(|e| format!("{text:?} is not a count: {e}"))?;
    if !(1..=limits::MAX_GRAPH_BOUND).contains(&value) {
        return Err(format!(
            "{value} is outside 1..={}",
            limits::MAX_GRAPH_BOUND
        ));
    }
    Ok(value)
}

/// A byte bound from the command line: a count with an optional binary suffix (`KiB`, `MiB`,
/// `GiB`), from 1 KiB to [`limits::MAX_BYTES_BOUND`].
fn byte_bound(text: &str) -> Result<usize, String> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let shift = match &text[digits.len()..] {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        other => return Err(format!("unknown unit {other:?} (use KiB, MiB or GiB)")),
    };
    let count: usize = digits
        .parse()
        .map_err(|e| format!("{text:?} is not a size: {e}"))?;
    let value = count
        .checked_mul(1 << shift)
        .filter(|v| (1024..=limits::MAX_BYTES_BOUND).contains(v))
        .ok_or_else(|| format!("{text} is outside 1KiB..=16GiB"))?;
    Ok(value)
}

impl Cli {
    /// How large each knowledge graph, and one reply about it, may grow.
    pub fn graph_bounds(&self) -> GraphBounds {
        GraphBounds {
            max_entities: self.max_entities,
            max_relations: self.max_relations,
            max_bytes: self.max_graph_bytes,
            max_reply_bytes: self.max_reply_bytes,
        }
    }

    /// The store directory to open.
    pub fn store_dir(&self) -> Result<PathBuf, McpError> {
        if let Some(dir) = &self.store {
            return Ok(dir.clone());
        }
        if let Some(dir) = std::env::var_os("MEMORYBENCH_MCP_STORE").filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(dir));
        }
        mb_embed::user_data_dir()
            .map(|dir| dir.join("mcp-store"))
            .ok_or_else(|| {
                McpError::Config(
                    "no --store given and neither HOME nor XDG_DATA_HOME is set".into(),
                )
            })
    }

    /// The HTTP address to bind, when serving HTTP.
    pub fn http_addr(&self) -> Result<Option<SocketAddr>, McpError> {
        let Some(text) = &self.http else {
            return Ok(None);
        };
        let addr = match text.parse::<u16>() {
            Ok(port) => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            Err(_) => text.parse::<SocketAddr>().map_err(|e| {
                McpError::invalid("--http", format!("{text:?} is not HOST:PORT or PORT: {e}"))
            })?,
        };
        if !addr.ip().is_loopback() && !self.allow_remote {
            return Err(McpError::invalid(
                "--http",
                format!("{addr} is not a loopback address; pass --allow-remote to bind it"),
            ));
        }
        Ok(Some(addr))
    }

    /// The memory tools' settings.
    pub fn memory(&self) -> MemoryConfig {
        MemoryConfig {
            system: self.memory_system.clone(),
            embedder: self.embedder.clone(),
            llm: self.llm.clone(),
            workers: usize::from(self.workers),
        }
    }

    /// The configuration file's contents (empty without `--config`); tenants over a
    /// non-loopback address are required.
    pub fn service_config(&self) -> Result<crate::tenants_file::ServiceConfig, McpError> {
        let config = match &self.config {
            Some(path) => crate::tenants_file::ServiceConfig::load(path)?,
            None => crate::tenants_file::ServiceConfig::default(),
        };
        if let Some(addr) = self.http_addr()? {
            if !addr.ip().is_loopback() && config.tenants.is_empty() {
                return Err(McpError::Config(format!(
                    "--http {addr} is reachable from other machines: name the tenants and \
                     their tokens in a --config file"
                )));
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_binds_loopback_unless_allowed() {
        let cli = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("memorybench-mcp").chain(args.iter().copied()))
                .unwrap()
        };
        let addr = cli(&["--http", "8080"]).http_addr().unwrap().unwrap();
        assert_eq!(addr.to_string(), "127.0.0.1:8080");
        assert!(cli(&["--http", "0.0.0.0:8080"]).http_addr().is_err());
        assert!(cli(&["--http", "0.0.0.0:8080", "--allow-remote"])
            .http_addr()
            .is_ok());
        assert!(cli(&["--http", "nope"]).http_addr().is_err());
        assert_eq!(cli(&[]).memory().system, "hybrid");
        assert_eq!(cli(&[]).graph_bounds(), GraphBounds::default());
        let raised = cli(&["--max-entities", "2000000"]).graph_bounds();
        assert_eq!(raised.max_entities, 2_000_000);
        let bad = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("memorybench-mcp").chain(args.iter().copied()))
                .is_err()
        };
        assert!(bad(&["--max-entities", "0"]));
        assert!(bad(&["--max-relations", "10000001"]));
        assert!(bad(&["--max-entities", "-3"]));
        let bytes = cli(&["--max-graph-bytes", "2GiB", "--max-reply-bytes", "4096"]).graph_bounds();
        assert_eq!((bytes.max_bytes, bytes.max_reply_bytes), (2 << 30, 4096));
        assert!(bad(&["--max-graph-bytes", "17GiB"]));
        assert!(bad(&["--max-reply-bytes", "1000"]));
        assert!(bad(&["--max-reply-bytes", "5MB"]));
        assert!(bad(&["--max-graph-bytes", "99999999999999999999GiB"]));
    }
}
