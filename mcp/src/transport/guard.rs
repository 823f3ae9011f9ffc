//! The HTTP guard every request passes before the MCP service sees it:
//!
//! 1. authentication: with tenants configured, `Authorization: Bearer TOKEN` must name one
//!    whose token has not expired, else 401 (the same answer for a missing, unknown or expired
//!    token); the tenant is attached to the request for the tools to read;
//! 2. sessions stay with the tenant that opened them: another tenant's session id is answered
//!    404, as an unknown one;
//! 3. per-tenant concurrency: more `POST`s in flight than the tenant's `max_concurrent` get
//!    429 (the permit is held until the response, an event stream, has been sent whole);
//! 4. body size: a body over [`limits::MAX_HTTP_BODY`] gets 413, whether its length is
//!    declared or it is sent in chunks (read up to the limit, then refused); a body that takes
//!    longer than [`limits::HTTP_BODY_TIMEOUT`] to arrive gets 408.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::auth::{Authorized, Tokens};
use crate::limits;
use crate::tenant::Tenant;

const SESSION_HEADER: &str = "mcp-session-id";

/// The guard's state, shared by every request.
pub struct Guard {
    tokens: Tokens,
    in_flight: Mutex<HashMap<String, Arc<Semaphore>>>,
    sessions: Mutex<HashMap<String, String>>,
}

impl Guard {
    /// A guard over `tokens` (none: every request is the local tenant's, no token needed).
    pub fn new(tokens: Tokens) -> Guard {
        Guard {
            tokens,
            in_flight: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    fn authorize(&self, request: &Request) -> Option<Authorized> {
        if self.tokens.is_empty() {
            return Some(self.tokens.local());
        }
        let header = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        self.tokens
            .authenticate(header, mb_core::clock::now_ms() / 1000)
            .ok()
    }

    fn permit(&self, authorized: &Authorized) -> Option<OwnedSemaphorePermit> {
        let semaphore = {
            let mut table = self.in_flight.lock().ok()?;
            table
                .entry(authorized.tenant.name().to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(authorized.max_concurrent)))
                .clone()
        };
        semaphore.try_acquire_owned().ok()
    }

    /// Whether `session` (when given) is unknown or `tenant`'s.
    fn session_allowed(&self, session: Option<&str>, tenant: &Tenant) -> bool {
        let Some(session) = session else { return true };
        match self.sessions.lock() {
            Ok(table) => table
                .get(session)
                .is_none_or(|owner| owner == tenant.name()),
            Err(_) => false,
        }
    }

    /// Records the session a response opened (refused past [`limits::MAX_SESSIONS`]).
    fn remember_session(&self, session: &str, tenant: &Tenant) -> bool {
        let Ok(mut table) = self.sessions.lock() else {
            return false;
        };
        if table.len() >= limits::MAX_SESSIONS && !table.contains_key(session) {
            return false;
        }
        table.insert(session.to_string(), tenant.name().to_string());
        true
    }

    fn forget_session(&self, session: &str) {
        if let Ok(mut table) = self.sessions.lock() {
            table.remove(session);
        }
    }
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let mut response = (status, format!("{message}\n")).into_response();
    match status {
        StatusCode::UNAUTHORIZED => {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"memorybench-mcp\""),
            );
        }
        StatusCode::TOO_MANY_REQUESTS => {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        _ => {}
    }
    response
}

/// The guard as an axum middleware (see the module documentation).
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let Some(authorized) = guard.authorize(&request) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized: send Authorization: Bearer <token> with a valid token",
        );
    };
    let tenant = authorized.tenant.clone();
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if !guard.session_allowed(session.as_deref(), &tenant) {
        return refuse(StatusCode::NOT_FOUND, "session not found");
    }
    let permit = if request.method() == Method::POST {
        match guard.permit(&authorized) {
            Some(permit) => Some(permit),
            None => {
                return refuse(
                    StatusCode::TOO_MANY_REQUESTS,
                    &format!(
                        "too many requests in flight for this tenant (at most {}); retry later",
                        authorized.max_concurrent
                    ),
                )
            }
        }
    } else {
        None
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("request body larger than {} bytes", limits::MAX_HTTP_BODY),
        )
    };
    if declared.is_some_and(|n| n > limits::MAX_HTTP_BODY as u64) {
        return too_large();
    }
    let is_delete = request.method() == Method::DELETE;
    let (mut parts, body) = request.into_parts();
    let bytes = match Limited::new(body, limits::MAX_HTTP_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return too_large(),
        Err(_) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            )
        }
    };
    parts.extensions.insert(tenant.clone());
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if let Some(opened) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        if session.is_none() && !guard.remember_session(opened, &tenant) {
            return refuse(StatusCode::TOO_MANY_REQUESTS, "too many open sessions");
        }
    }
    if is_delete && response.status().is_success() {
        if let Some(session) = &session {
            guard.forget_session(session);
        }
        // rmcp answers an ended session 202 (Accepted); clients such as the Python SDK count
        // only 200 and 204 as success and warn otherwise. The session is gone: 204.
        return StatusCode::NO_CONTENT.into_response();
    }
    match permit {
        None => response,
        Some(permit) => {
            let (parts, body) = response.into_parts();
            // The permit goes when the body does: after the last event of the stream.
            let held = body.map_err(move |e| {
                let _held = &permit;
                e
            });
            Response::from_parts(parts, Body::new(held))
        }
    }
}
