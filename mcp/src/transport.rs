//! The two transports: stdio (one session over standard input and output) and Streamable HTTP
//! (sessions over `POST/GET/DELETE /mcp`), both bounded in message size.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use crate::error::McpError;
use crate::limits;
use crate::server::{Backends, Server};

/// Serves one session on standard input and output until the client closes it.
pub async fn serve_stdio(backends: Arc<Backends>) -> Result<(), McpError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let transport =
        AsyncRwTransport::new_server(stdin, stdout).with_max_line_length(limits::MAX_STDIO_LINE);
    let running = Server::new(backends)
        .serve(transport)
        .await
        .map_err(|e| McpError::Io(format!("stdio session did not start: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| McpError::Io(format!("stdio session failed: {e}")))?;
    Ok(())
}

/// Serves Streamable HTTP at `http://{addr}/mcp` until `shutdown` is cancelled; prints the
/// bound address (useful with port 0) on standard error once listening.
pub async fn serve_http(
    backends: Arc<Backends>,
    addr: SocketAddr,
    allowed_hosts: Vec<String>,
    shutdown: CancellationToken,
) -> Result<(), McpError> {
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = shutdown.child_token();
    if !allowed_hosts.is_empty() {
        config.allowed_hosts = allowed_hosts;
    }
    let service: StreamableHttpService<Server, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(Server::new(backends.clone())),
        Default::default(),
        config,
    );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(limit_body));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| McpError::Io(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| McpError::Io(format!("listening address: {e}")))?;
    eprintln!("memorybench-mcp: listening on http://{bound}/mcp");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
        .map_err(|e| McpError::Io(format!("HTTP server failed: {e}")))
}

/// Caps every request body at [`limits::MAX_HTTP_BODY`] bytes: a larger declared length is
/// answered 413 at once; a longer body without one fails when the limit is reached.
async fn limit_body(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits::MAX_HTTP_BODY as u64) {
        return (
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body larger than {} bytes", limits::MAX_HTTP_BODY),
        )
            .into_response();
    }
    let (parts, body) = request.into_parts();
    let limited = http_body_util::Limited::new(body, limits::MAX_HTTP_BODY);
    next.run(Request::from_parts(parts, Body::new(limited)))
        .await
}
