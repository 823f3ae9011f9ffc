//! The API's replies: JSON bodies, and errors as `{"error": ..., "field": ...}` with their
//! status, so that the page can say what was refused and mark the field.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// A refused or failed request.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
    field: Option<String>,
}

impl ApiError {
    /// Bad input (400).
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// Nothing there (404).
    pub fn missing(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// A launch field that is not one of its choices (422), naming the field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError {
            field: Some(field.into()),
            ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message)
        }
    }

    /// Any status.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            field: None,
        }
    }

    /// The status, for tests.
    #[cfg(test)]
    pub fn status(&self) -> u16 {
        self.status.as_u16()
    }

    /// A failure of the server's own work (500); the detail goes to the log.
    pub fn internal(detail: impl std::fmt::Display) -> ApiError {
        tracing::warn!("serve: {detail}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            mb_core::excerpt(&detail.to_string(), mb_core::MESSAGE_CHARS).into_owned(),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": self.message, "field": self.field});
        (self.status, Json(body)).into_response()
    }
}

impl From<crate::error::HarnessError> for ApiError {
    fn from(error: crate::error::HarnessError) -> ApiError {
        ApiError::internal(error)
    }
}

/// What a handler returns.
pub(crate) type ApiResult<T> = Result<T, ApiError>;

/// Runs file work off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ApiError::internal)?
}

/// Any path the API does not have.
pub(crate) async fn not_found() -> ApiError {
    ApiError::missing("no such page")
}
