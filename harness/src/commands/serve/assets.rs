//! The page: static files compiled into the binary, so the server needs no files of its own
//! beside it and serves nothing else by name.

use axum::extract::Path;
use axum::http::header;
use axum::response::IntoResponse;

use super::reply::ApiError;

const INDEX: &str = include_str!("assets/index.html");

/// The page's scripts and style sheets by name: shared helpers and routing (`app.js`), one
/// script per view, the page's style and the report's (shared with `mb-harness report`).
const FILES: [(&str, &str, &str); 6] = [
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/app.js"),
    ),
    (
        "run.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/run.js"),
    ),
    (
        "watch.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/watch.js"),
    ),
    (
        "results.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/results.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("assets/app.css"),
    ),
    (
        "report.css",
        "text/css; charset=utf-8",
        crate::commands::report::STYLE,
    ),
];

/// `GET /`.
pub(crate) async fn index() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX)
}

/// `GET /assets/{name}`: only the page's own files.
pub(crate) async fn asset(Path(name): Path<String>) -> Result<impl IntoResponse, ApiError> {
    let (_, kind, body) = FILES
        .iter()
        .find(|(file, _, _)| *file == name)
        .ok_or_else(|| ApiError::missing("no such asset"))?;
    Ok(([(header::CONTENT_TYPE, *kind)], *body))
}
