//! The two transports: stdio (one session over standard input and output, the local tenant)
//! and Streamable HTTP (sessions over `POST/GET/DELETE /mcp`, behind the [`guard`]: tenants by
//! bearer token, per-tenant concurrency, bounded bodies).

pub mod guard;

use axum::serve::ListenerExt;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use std::future::IntoFuture;
use tokio_util::sync::CancellationToken;

use crate::auth::Tokens;
use crate::error::McpError;
use crate::limits;
use crate::server::{Backends, Server, Transport};

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
    sessions: guard::SessionPolicy,
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
    manager.session_config.keep_alive = Some(sessions.idle);
    let manager = Arc::new(manager);
    let service: StreamableHttpService<Server, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(Server::new(backends.clone(), Transport::Http)),
        manager.clone(),
        config,
    );
    let guard = Arc::new(guard::Guard::new(tokens, sessions, manager));
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
    // Replies go out as they are written: with Nagle's algorithm, a reply's last segment
    // waits for the client's delayed acknowledgement (40 ms on Linux) on a kept-alive
    // connection.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY: {e}");
        }
    });
    let stop = shutdown.clone();
    let serving = axum::serve(listener, router)
        .with_graceful_shutdown(async move { stop.cancelled_owned().await })
        .into_future();
    // Requests in flight get a bounded time to finish: a client that never completes its
    // request cannot hold the server up.
    let drain_bound = async {
        shutdown.cancelled().await;
        tokio::time::sleep(limits::HTTP_SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        served = serving => served.map_err(|e| McpError::Io(format!("HTTP server failed: {e}"))),
        () = drain_bound => {
            eprintln!(
                "memorybench-mcp: requests still open {:?} after the stop are dropped",
                limits::HTTP_SHUTDOWN_GRACE
            );
            Ok(())
        }
    }
}
