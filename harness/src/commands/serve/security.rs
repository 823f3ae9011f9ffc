//! Who may call the server, and what a browser may do with its pages.
//!
//! - On loopback without a token, only requests whose `Host` is this server's loopback address
//!   are answered: a page elsewhere cannot reach it through DNS rebinding.
//! - With a token (`--token-env`, required off loopback), every request carries it: as
//!   `Authorization: Bearer`, or in the cookie that opening `/?token=...` sets. Tokens are
//!   compared by their SHA-256 digests.
//! - A request that changes something (`POST`) must be JSON and, when a browser says where it
//!   comes from (`Origin`), come from this server's own origin: no cross-site form posts.
//! - Every reply forbids framing, sniffing and any script or style not from the server.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::reply::ApiError;
use super::Server;

/// The cookie holding the token.
const COOKIE: &str = "mb_serve_token";

/// Who may call.
pub(crate) struct Access {
    /// The `Host` values accepted, when they are restricted (loopback without a token).
    hosts: Option<Vec<String>>,
    /// The token's digest, when one is needed.
    token: Option<[u8; 32]>,
}

impl Access {
    /// The rules for a server bound to `bound`, with `token` if one is set.
    pub fn new(bound: SocketAddr, token: Option<String>) -> Access {
        let port = bound.port();
        let hosts = token.is_none().then(|| {
            vec![
                format!("127.0.0.1:{port}"),
                format!("localhost:{port}"),
                format!("[::1]:{port}"),
                bound.to_string(),
            ]
        });
        Access {
            hosts,
            token: token.map(|t| digest(&t)),
        }
    }

    /// Whether `given` is the token.
    fn is_token(&self, given: &str) -> bool {
        self.token.is_some_and(|t| t == digest(given))
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The middleware applying [`Access`] and the page's headers.
pub(crate) async fn guard(
    State(server): State<Arc<Server>>,
    request: Request,
    next: Next,
) -> Response {
    let access = &server.access;
    let host = header_text(&request, header::HOST).unwrap_or_default();
    if let Some(hosts) = &access.hosts {
        if !hosts.iter().any(|h| h == &host) {
            return ApiError::new(StatusCode::FORBIDDEN, "unknown Host").into_response();
        }
    }
    if access.token.is_some() {
        if let Some(given) = token_in_query(&request) {
            if request.method() == Method::GET
                && request.uri().path() == "/"
                && access.is_token(&given)
            {
                return with_headers(sign_in(&given));
            }
            return ApiError::new(StatusCode::UNAUTHORIZED, "wrong token").into_response();
        }
        let bearer = header_text(&request, header::AUTHORIZATION)
            .and_then(|h| h.strip_prefix("Bearer ").map(str::to_string));
        let cookie = cookie_token(&request);
        if !bearer.or(cookie).is_some_and(|t| access.is_token(&t)) {
            return ApiError::new(
                StatusCode::UNAUTHORIZED,
                "this server needs its token: open /?token=...",
            )
            .into_response();
        }
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let json = header_text(&request, header::CONTENT_TYPE)
            .is_some_and(|t| t.starts_with("application/json"));
        if !json {
            return ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send JSON (Content-Type: application/json)",
            )
            .into_response();
        }
        if let Some(origin) = header_text(&request, header::ORIGIN) {
            if origin != format!("http://{host}") {
                return ApiError::new(StatusCode::FORBIDDEN, "a request from another site")
                    .into_response();
            }
        }
    }
    with_headers(next.run(request).await)
}

/// `/?token=` answered: the cookie set, and the page again without the token in its address.
fn sign_in(token: &str) -> Response {
    let cookie = format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
    let mut response = Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(header::LOCATION, "/")
        .body(Body::empty())
        .unwrap_or_default();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// The headers every reply carries.
fn with_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

fn header_text(request: &Request, name: header::HeaderName) -> Option<String> {
    request
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn token_in_query(request: &Request) -> Option<String> {
    let Query(mut query) =
        Query::<std::collections::HashMap<String, String>>::try_from_uri(request.uri()).ok()?;
    query.remove("token")
}

fn cookie_token(request: &Request) -> Option<String> {
    request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_string())
}
