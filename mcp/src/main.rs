//! `memorybench-mcp`: serves the memorybench MCP tools on stdio (default) or Streamable HTTP.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use mb_engine::{Engine, EngineOptions};
use memorybench_mcp::{transfer, transport, Backends, Cli, McpError};
use tokio_util::sync::CancellationToken;

/// mimalloc instead of the system allocator: a server answering thousands of small JSON
/// requests a second spent a fifth of its time in glibc's malloc and free (docs/benchmarks.md,
/// "MCP load").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    if let Some(command) = &cli.command {
        let done = transfer::run(&cli.store_dir()?, &cli.graph_namespace, command)?;
        eprintln!("memorybench-mcp: {done}");
        return Ok(());
    }
    let http = cli.http_addr()?;
    let tokens = cli.service_config()?.tokens()?;
    let store = cli.store_dir()?;
    std::fs::create_dir_all(&store)
        .map_err(|e| McpError::Io(format!("cannot create {}: {e}", store.display())))?;
    // Every write synced: an acknowledged add_memory survives power loss, not only kill -9.
    let mut options = EngineOptions::default();
    options.sync_writes = true;
    let engine = Arc::new(Engine::open(&store, options)?);
    let backends = Arc::new(Backends::open(
        engine,
        &cli.graph_namespace,
        cli.graph_bounds(),
        &cli.memory(),
    )?);
    if let Some(file) = &cli.import_jsonl {
        match memorybench_mcp::import_jsonl(backends.graph(), file)? {
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
    let served = runtime.block_on(async {
        let workers = match backends.memory() {
            Ok(memory) => {
                let recovered = memory.recover_queue()?;
                if recovered > 0 {
                    eprintln!("memorybench-mcp: resuming {recovered} queued dialogs");
                }
                memory.start_workers()
            }
            Err(_) => Vec::new(),
        };
        let shutdown = CancellationToken::new();
        tokio::spawn(on_signal(shutdown.clone()));
        let served = match http {
            None => {
                tokio::select! {
                    served = transport::serve_stdio(backends.clone()) => served,
                    () = shutdown.cancelled() => Ok(()),
                }
            }
            Some(addr) => {
                transport::serve_http(
                    backends.clone(),
                    addr,
                    cli.allowed_hosts.clone(),
                    tokens,
                    transport::guard::HttpPolicy {
                        per_tenant: cli.max_sessions_per_tenant as usize,
                        idle: std::time::Duration::from_secs(cli.session_idle_secs),
                        deadline: std::time::Duration::from_secs(cli.http_deadline_secs),
                    },
                    shutdown,
                )
                .await
            }
        };
        // Dialogs being memorized finish (within a bound); the rest stay queued on disk.
        if let Ok(memory) = backends.memory() {
            memory.stop_workers();
        }
        let drained = async {
            for worker in workers {
                let _ = worker.await;
            }
        };
        if tokio::time::timeout(SHUTDOWN_GRACE, drained).await.is_err() {
            eprintln!("memorybench-mcp: dialogs still being memorized after {SHUTDOWN_GRACE:?} are left queued");
        }
        served
    });
    // The runtime's tasks hold the backends; once it is gone the engine is the last owner.
    runtime.shutdown_timeout(Duration::from_secs(1));
    let closed = match Arc::try_unwrap(backends) {
        Ok(backends) => backends.close(),
        Err(_) => Ok(()),
    };
    served.and(closed)
}

/// How long a stop waits for dialogs being memorized.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Cancels `shutdown` on SIGTERM or SIGINT.
async fn on_signal(shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    eprintln!("memorybench-mcp: stopping (finishing requests in flight)");
    shutdown.cancel();
}
