//! The HTTP guard every request passes before the MCP service sees it:
//!
//! 1. authentication: with tenants configured, `Authorization: Bearer TOKEN` must name one
//!    whose token has not expired, else 401 (the same answer for a missing, unknown or expired
//!    token); the tenant is attached to the request for the tools to read;
//! 2. sessions stay with the tenant that opened them: another tenant's session id is answered
//!    404, as an unknown one. A tenant keeps at most [`HttpPolicy::per_tenant`] sessions
//!    open (its next `initialize` gets 429), and a session with no request for
//!    [`HttpPolicy::idle`] is closed, here and in the protocol library, so that clients that
//!    never send DELETE cannot fill the server-wide table ([`limits::MAX_SESSIONS`]);
//! 3. per-tenant concurrency: more `POST`s in flight than the tenant's `max_concurrent` get
//!    429 (the permit is held until the response, an event stream, has been sent whole);
//! 4. body size: a body over [`limits::MAX_HTTP_BODY`] gets 413, whether its length is
//!    declared or it is sent in chunks (read up to the limit, then refused); a body that takes
//!    longer than [`HttpPolicy::deadline`] to arrive gets 408 (headers have the same deadline,
//!    enforced by the accept loop's HTTP/1.1 server).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::limits;
use crate::tenant::Tenant;
use crate::tenants_file::{Authorized, Tokens};

const SESSION_HEADER: &str = "mcp-session-id";

/// The HTTP transport's settings: how many sessions a tenant keeps, how long an unused one
/// lives, and how long a request's headers and its body may take to arrive.
#[derive(Debug, Clone, Copy)]
pub struct HttpPolicy {
    /// Most sessions one tenant keeps open.
    pub per_tenant: usize,
    /// A session with no request for this long is closed.
    pub idle: Duration,
    /// A request's headers, and then its body, must each arrive within this.
    pub deadline: Duration,
}

/// An open session: whose, and when it was last used.
struct OpenSession {
    tenant: String,
    last_used: Instant,
}

/// The guard's state, shared by every request.
pub struct Guard {
    tokens: Tokens,
    in_flight: Mutex<HashMap<String, Arc<Semaphore>>>,
    sessions: Mutex<HashMap<String, OpenSession>>,
    policy: HttpPolicy,
    /// The protocol library's sessions, closed when the guard drops one.
    library: Arc<LocalSessionManager>,
}

impl Guard {
    /// A guard over `tokens` (none: every request is the local tenant's, no token needed),
    /// keeping sessions by `policy` in step with the library's `library`.
    pub fn new(tokens: Tokens, policy: HttpPolicy, library: Arc<LocalSessionManager>) -> Guard {
        Guard {
            tokens,
            in_flight: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
            policy,
            library,
        }
    }

    /// Closes `ids` in the protocol library (in the background: the table is already without
    /// them).
    fn close_in_library(&self, ids: Vec<String>) {
        if ids.is_empty() {
            return;
        }
        let library = self.library.clone();
        tokio::spawn(async move {
            for id in ids {
                if let Err(e) = library.close_session(&id.into()).await {
                    tracing::debug!("closing an expired session: {e}");
                }
            }
        });
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

    /// Whether `session` (when given) is unknown or `tenant`'s; a use of the tenant's own
    /// session keeps it alive.
    fn session_allowed(&self, session: Option<&str>, tenant: &Tenant) -> bool {
        let Some(session) = session else { return true };
        match self.sessions.lock() {
            Ok(mut table) => match table.get_mut(session) {
                None => true,
                Some(open) if open.tenant == tenant.name() => {
                    open.last_used = Instant::now();
                    true
                }
                Some(_) => false,
            },
            Err(_) => false,
        }
    }

    /// Records the session a response opened, after dropping every session idle past the
    /// policy; refused (and closed) when the tenant has its share open, or the server
    /// [`limits::MAX_SESSIONS`]. The refusal names which.
    fn remember_session(&self, session: &str, tenant: &Tenant) -> Result<(), String> {
        let now = Instant::now();
        let (refused, expired) = {
            let Ok(mut table) = self.sessions.lock() else {
                return Err("the session table is unavailable".into());
            };
            let idle = self.policy.idle;
            let expired: Vec<String> = table
                .iter()
                .filter(|(_, open)| now.duration_since(open.last_used) >= idle)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                table.remove(id);
            }
            let own = table.values().filter(|o| o.tenant == tenant.name()).count();
            let refused = if own >= self.policy.per_tenant {
                Some(format!(
                    "too many open sessions for this tenant (at most {}); end some with DELETE, \
                     or wait for unused ones to expire after {} s",
                    self.policy.per_tenant,
                    idle.as_secs()
                ))
            } else if table.len() >= limits::MAX_SESSIONS {
                Some(format!(
                    "too many open sessions on this server (at most {})",
                    limits::MAX_SESSIONS
                ))
            } else {
                table.insert(
                    session.to_string(),
                    OpenSession {
                        tenant: tenant.name().to_string(),
                        last_used: now,
                    },
                );
                None
            };
            (refused, expired)
        };
        let mut closing = expired;
        if refused.is_some() {
            // The library opened it for the refused response: nobody will use it.
            closing.push(session.to_string());
        }
        self.close_in_library(closing);
        refused.map_or(Ok(()), Err)
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
    let collected = tokio::time::timeout(
        guard.policy.deadline,
        Limited::new(body, limits::MAX_HTTP_BODY).collect(),
    )
    .await;
    let Ok(collected) = collected else {
        return refuse(
            StatusCode::REQUEST_TIMEOUT,
            &format!(
                "the request body did not arrive within {} s",
                guard.policy.deadline.as_secs()
            ),
        );
    };
    let bytes = match collected {
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
        if session.is_none() {
            if let Err(why) = guard.remember_session(opened, &tenant) {
                return refuse(StatusCode::TOO_MANY_REQUESTS, &why);
            }
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
