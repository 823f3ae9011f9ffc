//! `memorybench-mcp`: serves the memorybench MCP tools on stdio (default) or Streamable HTTP.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use mb_engine::{Engine, EngineOptions};
use memorybench_mcp::{transport, Backends, Cli, McpError};
use tokio_util::sync::CancellationToken;

fn main() -> ExitCode {
    // Logs go to standard error: standard output carries the protocol on stdio.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memorybench-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<(), McpError> {
    let http = cli.http_addr()?;
    let store = cli.store_dir()?;
    std::fs::create_dir_all(&store)
        .map_err(|e| McpError::Io(format!("cannot create {}: {e}", store.display())))?;
    let engine = Arc::new(Engine::open(&store, EngineOptions::default())?);
    let backends = Arc::new(Backends::open(engine, &cli.graph_namespace, &cli.memory())?);
    if let Some(file) = &cli.import_jsonl {
        match memorybench_mcp::graph::import::import_jsonl(backends.graph(), file)? {
            Some((entities, relations)) => eprintln!(
                "memorybench-mcp: imported {entities} entities and {relations} relations from {}",
                file.display()
            ),
            None => eprintln!(
                "memorybench-mcp: the graph is not empty; {} not imported",
                file.display()
            ),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| McpError::Io(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async move {
        match http {
            None => transport::serve_stdio(backends).await,
            Some(addr) => {
                let shutdown = CancellationToken::new();
                let on_signal = shutdown.clone();
                tokio::spawn(async move {
                    let _ = tokio::signal::ctrl_c().await;
                    on_signal.cancel();
                });
                transport::serve_http(backends, addr, cli.allowed_hosts.clone(), shutdown).await
            }
        }
    })
}
