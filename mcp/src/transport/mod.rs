//! The two transports: stdio (one session over standard input and output, the local tenant)
//! and Streamable HTTP (sessions over `POST/GET/DELETE /mcp`, behind the [`guard`]: tenants by
//! bearer token, per-tenant concurrency, bounded bodies).

pub mod guard;

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use crate::error::McpError;
use crate::limits;
use crate::server::{Backends, Server, Transport};
use crate::tenants_file::Tokens;

/// Serves one session on standard input and output until the client closes it.
pub async fn serve_stdio(backends: Arc<Backends>) -> Result<(), McpError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let transport =
        AsyncRwTransport::new_server(stdin, stdout).with_max_line_length(limits::MAX_STDIO_LINE);
    let running = Server::new(backends, Transport::Stdio)
        .serve(transport)
        .await
        .map_err(|e| McpError::Io(format!("stdio session did not start: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| McpError::Io(format!("stdio session failed: {e}")))?;
    Ok(())
}

/// Serves Streamable HTTP at `http://{addr}/mcp` until `shutdown` is cancelled, then lets
/// the requests in flight finish; prints the bound address (useful with port 0) on standard
/// error once listening. With `tokens`, every request needs a tenant's bearer token.
pub async fn serve_http(
    backends: Arc<Backends>,
    addr: SocketAddr,
    allowed_hosts: Vec<String>,
    tokens: Tokens,
    policy: guard::HttpPolicy,
    shutdown: CancellationToken,
) -> Result<(), McpError> {
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = shutdown.child_token();
    if !allowed_hosts.is_empty() {
        config.allowed_hosts = allowed_hosts;
    }
    // The library closes a session's worker after `idle` without a request; the guard then
    // removes it from its table and from the library's.
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(policy.idle);
    let manager = Arc::new(manager);
    let service: StreamableHttpService<Server, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(Server::new(backends.clone(), Transport::Http)),
        manager.clone(),
        config,
    );
    let guard = Arc::new(guard::Guard::new(tokens, policy, manager));
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(guard, guard::guard));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| McpError::Io(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| McpError::Io(format!("listening address: {e}")))?;
    eprintln!("memorybench-mcp: listening on http://{bound}/mcp");
    // HTTP/1.1 with a timer, so that a request's headers must arrive within the deadline
    // (axum's `serve` gives hyper no timer, and half-sent headers held a connection for
    // minutes); the body's deadline is the guard's.
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(policy.deadline);
    let graceful = GracefulShutdown::new();
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, keep serving.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        // Replies go out as they are written: with Nagle's algorithm, a reply's last segment
        // waits for the client's delayed acknowledgement (40 ms on Linux) on a kept-alive
        // connection.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY: {e}");
        }
        let service = TowerToHyperService::new(router.clone());
        // Streamable HTTP needs no protocol upgrade.
        let connection = http.serve_connection(TokioIo::new(tcp), service);
        let watched = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = watched.await {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    // Requests in flight get a bounded time to finish: a client that never completes its
    // request cannot hold the server up.
    tokio::select! {
        () = graceful.shutdown() => Ok(()),
        () = tokio::time::sleep(limits::HTTP_SHUTDOWN_GRACE) => {
            eprintln!(
                "memorybench-mcp: requests still open {:?} after the stop are dropped",
                limits::HTTP_SHUTDOWN_GRACE
            );
            Ok(())
        }
    }
}
