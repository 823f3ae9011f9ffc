//! One HTTP endpoint with retries, backoff, a concurrency limit and error classification.
//!
//! Both providers post JSON and read JSON; what differs is the wire format. This module owns
//! everything else: the per-request timeout, the in-flight limit (a semaphore per server, so a
//! run with many parallel test cases never floods a vLLM server), retries with exponential backoff and
//! jitter on transient failures (connection errors, timeouts, 429, 5xx, unreadable bodies)
//! honouring `Retry-After`, and the split of client errors into context overflows and plain
//! rejections, neither of which is retried.

use std::collections::BTreeMap;
use std::time::Duration;

use mb_core::retry::{is_transient, retry, retry_after, Attempt, Backoff, RetryPolicy, Transient};
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};

use crate::error::{check_wait, LlmError, Result};
use crate::replicas::Replicas;

/// Connection and robustness settings of one endpoint, and the output limits of the role that
/// uses it (see [`crate::OutputLimits`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct EndpointConfig {
    /// Base URL, e.g. `http://localhost:12345/v1` (OpenAI-compatible) or
    /// `https://api.anthropic.com` (Anthropic).
    pub base_url: String,
    /// Model name sent with each request.
    pub model: String,
    /// Environment variable holding the API key, if the endpoint needs one.
    pub api_key_env: Option<String>,
    /// Timeout of one request, in seconds.
    pub timeout_secs: f64,
    /// Retries after transient failures before giving up.
    pub max_retries: u32,
    /// Wait before the first retry, in seconds; doubled per retry up to `max_backoff_secs`,
    /// each wait drawn uniformly from its upper half (jitter).
    pub initial_backoff_secs: f64,
    /// Longest wait between retries, in seconds.
    pub max_backoff_secs: f64,
    /// More base URLs serving the same model (replicas, e.g. several vLLM servers): each
    /// request goes to the server with the fewest requests in flight.
    pub replicas: Vec<String>,
    /// Most requests in flight at once to each server, across every provider of the process
    /// that uses the same URL (the first one's value counts).
    pub max_concurrency: usize,
    /// Most output tokens any request of the role asks for (default: each operation's own,
    /// upstream's 2048 unless it sets another).
    pub max_tokens: Option<u32>,
    /// Most output tokens per operation name (`extract_facts`, `answer`, …), taking precedence
    /// over `max_tokens`.
    pub max_tokens_per_operation: BTreeMap<String, u32>,
    /// Keyword arguments for the server's chat template, sent with every request of an
    /// OpenAI-compatible role (vLLM's `chat_template_kwargs`): `{ enable_thinking = false }`
    /// turns Qwen3's thinking off as upstream's `qwen3_nonthinking.jinja` does.
    pub chat_template_kwargs: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            base_url: "http://localhost:12345/v1".to_string(),
            model: "Qwen/Qwen3-8B".to_string(),
            api_key_env: None,
            timeout_secs: 300.0,
            max_retries: 6,
            initial_backoff_secs: 1.0,
            max_backoff_secs: 60.0,
            replicas: Vec::new(),
            max_concurrency: 16,
            max_tokens: None,
            max_tokens_per_operation: BTreeMap::new(),
            chat_template_kwargs: None,
        }
    }
}

/// A configured endpoint, shared by every request to it.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) config: EndpointConfig,
    client: reqwest::Client,
    servers: Replicas,
    api_key: Option<ApiKey>,
}

/// An API key: sent in request headers, never printed (`Debug` shows only that one is set).
#[derive(Clone)]
struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(redacted)")
    }
}

/// A successful response body and how many retries it took.
pub(crate) struct Reply {
    pub(crate) body: serde_json::Value,
    pub(crate) retries: u32,
}

impl Endpoint {
    pub(crate) fn new(config: EndpointConfig) -> Result<Endpoint> {
        check_wait("timeout_secs", config.timeout_secs)?;
        check_wait("initial_backoff_secs", config.initial_backoff_secs)?;
        check_wait("max_backoff_secs", config.max_backoff_secs)?;
        if config.max_concurrency == 0 {
            return Err(LlmError::Config {
                field: "max_concurrency",
                reason: "must be at least 1".to_string(),
            });
        }
        let api_key = match &config.api_key_env {
            Some(var) => Some(ApiKey(std::env::var(var).map_err(|_| {
                LlmError::Config {
                    field: "api_key_env",
                    reason: format!("environment variable {var} is not set"),
                }
            })?)),
            None => None,
        };
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs_f64(config.timeout_secs))
            .build()
            .map_err(|e| LlmError::Config {
                field: "base_url",
                reason: e.to_string(),
            })?;
        Ok(Endpoint {
            servers: Replicas::new(&config.base_url, &config.replicas, config.max_concurrency),
            config,
            client,
            api_key,
        })
    }

    /// The key to send, read from `api_key_env` when the endpoint was configured.
    pub(crate) fn api_key(&self) -> Option<&str> {
        self.api_key.as_ref().map(|key| key.0.as_str())
    }

    /// `path` on the primary server (the URL that names the endpoint in messages).
    pub(crate) fn url(&self, path: &str) -> String {
        self.servers.primary().url(path)
    }

    /// Posts `body` to `path` until it succeeds, fails for good, or retries run out; each
    /// attempt goes to the least loaded server.
    pub(crate) async fn post(
        &self,
        path: &str,
        headers: HeaderMap,
        body: &serde_json::Value,
    ) -> Result<Reply> {
        let policy = RetryPolicy {
            backoff: Backoff::new(
                Duration::from_secs_f64(self.config.initial_backoff_secs),
                Duration::from_secs_f64(self.config.max_backoff_secs),
            )
            .with_jitter(),
            max_retries: self.config.max_retries,
        };
        let headers = &headers;
        let (body, retries) = retry(
            policy,
            |previous: Option<&Transient<FailedAt>>| {
                let failed = previous.map(|p| p.context.base_url.clone());
                async move { self.attempt_once(failed, path, headers, body).await }
            },
            |wait, retries, failure| {
                let (url, detail) = (&failure.context.url, &failure.detail);
                tracing::warn!(%url, retries, ?wait, %detail, "LLM request failed; retrying");
                tokio::time::sleep(wait)
            },
            |last, attempts| LlmError::Exhausted {
                url: last.context.url,
                attempts,
                detail: last.detail,
            },
        )
        .await?;
        Ok(Reply { body, retries })
    }

    /// One attempt, on the least loaded server (avoiding `failed`, the one that just failed).
    async fn attempt_once(
        &self,
        failed: Option<String>,
        path: &str,
        headers: &HeaderMap,
        body: &serde_json::Value,
    ) -> Attempt<serde_json::Value, LlmError, FailedAt> {
        let (server, permit) = match self.servers.acquire(failed.as_deref()).await {
            Ok(acquired) => acquired,
            Err(error) => return Attempt::Fatal(error),
        };
        let url = server.url(path);
        let attempt = self.attempt(&url, headers, body).await;
        drop(permit);
        let (detail, retry_after) = match attempt {
            Outcome::Done(body) => return Attempt::Done(body),
            Outcome::Fatal(error) => return Attempt::Fatal(error),
            Outcome::Transient(detail, retry_after) => (detail, retry_after),
        };
        if let Some(stopped) = crate::local::stopped_server(&server.base_url) {
            return Attempt::Fatal(LlmError::Server(stopped));
        }
        Attempt::Transient(Transient {
            detail,
            retry_after,
            context: FailedAt {
                url,
                base_url: server.base_url.clone(),
            },
        })
    }

    async fn attempt(&self, url: &str, headers: &HeaderMap, body: &serde_json::Value) -> Outcome {
        let response = match self
            .client
            .post(url)
            .headers(headers.clone())
            .json(body)
            .send()
            .await
        {
            Ok(response) => response,
            Err(e) => return Outcome::Transient(describe(&e), None),
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, Duration::from_secs_f64(self.config.max_backoff_secs)));
        let text = match response.text().await {
            Ok(text) => text,
            Err(e) => return Outcome::Transient(describe(&e), None),
        };
        if status.is_success() {
            return match serde_json::from_str(&text) {
                Ok(body) => Outcome::Done(body),
                Err(e) => Outcome::Transient(
                    format!("unreadable response ({e}): {}", excerpt(&text)),
                    None,
                ),
            };
        }
        let detail = format!("HTTP {status}: {}", excerpt(&text));
        if is_transient(status.as_u16()) {
            return Outcome::Transient(detail, retry_after);
        }
        if is_context_overflow(status, &text) {
            return Outcome::Fatal(LlmError::ContextOverflow {
                url: url.to_string(),
                detail: excerpt(&text),
            });
        }
        Outcome::Fatal(LlmError::Rejected {
            url: url.to_string(),
            status: status.as_u16(),
            detail: excerpt(&text),
        })
    }
}

/// Where a failed attempt went: the URL (for messages) and its server (avoided next).
struct FailedAt {
    url: String,
    base_url: String,
}

enum Outcome {
    Done(serde_json::Value),
    Transient(String, Option<Duration>),
    Fatal(LlmError),
}

/// Whether a client error says the prompt is longer than the model's context: vLLM ("maximum
/// context length"), OpenAI (`context_length_exceeded`), Anthropic ("prompt is too long"),
/// llama.cpp ("exceeds the available context size").
fn is_context_overflow(status: StatusCode, body: &str) -> bool {
    if !(status == StatusCode::BAD_REQUEST || status == StatusCode::PAYLOAD_TOO_LARGE) {
        return false;
    }
    let body = body.to_lowercase();
    [
        "maximum context length",
        "context_length_exceeded",
        "prompt is too long",
        "exceeds the available context size",
        "context window",
        "too many tokens",
    ]
    .iter()
    .any(|marker| body.contains(marker))
}

fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "request timed out".to_string()
    } else if error.is_connect() {
        format!("cannot connect: {error}")
    } else {
        error.to_string()
    }
}

pub(crate) fn excerpt(body: &str) -> String {
    mb_core::retry::excerpt(body, 400)
}
