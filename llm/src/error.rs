//! The LLM error type.

/// Result alias used throughout the crate.
pub type Result<T, E = LlmError> = std::result::Result<T, E>;

/// Everything that can go wrong calling a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The prompt does not fit the model's context window. Retrying the same request cannot
    /// succeed; callers shorten the prompt (the harness falls back to a shorter context).
    #[error("{url}: prompt exceeds the model's context window: {detail}")]
    ContextOverflow {
        /// The endpoint.
        url: String,
        /// The server's message.
        detail: String,
    },
    /// A client error (4xx other than 429) that will not succeed on retry: bad key, unknown
    /// model, invalid parameters.
    #[error("{url}: HTTP {status}: {detail}")]
    Rejected {
        /// The endpoint.
        url: String,
        /// HTTP status code.
        status: u16,
        /// The server's message.
        detail: String,
    },
    /// Transient failures (connection errors, timeouts, 429, 5xx, unreadable bodies) that
    /// persisted through every retry.
    #[error("{url}: gave up after {attempts} attempts: {detail}")]
    Exhausted {
        /// The endpoint.
        url: String,
        /// Requests sent.
        attempts: u32,
        /// What the last attempt ran into.
        detail: String,
    },
    /// A successful response without the fields the wire format promises.
    #[error("{url}: unexpected response: {detail}")]
    BadResponse {
        /// The endpoint.
        url: String,
        /// What was missing, with an excerpt of the body.
        detail: String,
    },
    /// Replay mode met a request that was never recorded.
    #[error("replay: operation {operation:?} on {model} was never recorded (key {key}); run with --llm-cache record first")]
    ReplayMiss {
        /// The operation that asked.
        operation: String,
        /// The model asked.
        model: String,
        /// The request's cache key.
        key: String,
    },
    /// The store behind the record cache failed.
    #[error("LLM record cache: {0}")]
    Cache(String),
    /// The local model server could not start (see [`crate::LocalServer::start`]), or stopped
    /// while requests needed it. Not retried: it stays down.
    #[error("local model server: {0}")]
    Server(String),
    /// None of a role's servers accepts connections (see [`crate::check_reachable`]). Not
    /// retried: nothing listens there.
    #[error(
        "the {role} model at {url} is unreachable: {detail}; start its server or correct base_url"
    )]
    Unreachable {
        /// The role (answer, memory, simulator, judge).
        role: &'static str,
        /// The first of its servers' URLs that failed.
        url: String,
        /// Why the connection failed.
        detail: String,
    },
    /// Upstream's wording was asked for (`--upstream`) and cannot be used.
    #[error("upstream prompts: {0}")]
    Upstream(#[from] mb_upstream::UpstreamError),
    /// A configuration value that cannot work.
    #[error("invalid LLM setting {field}: {reason}")]
    Config {
        /// The setting.
        field: &'static str,
        /// Why it was rejected.
        reason: String,
    },
}

impl LlmError {
    /// Whether the model failed to give an answer (the prompt overflowed its context, the
    /// server refused the request or gave up, the reply was unreadable, or a replayed run has
    /// no recorded answer), rather than the setup being wrong (settings, cache, a stopped
    /// server): callers may answer such a failure another way, never a broken setup.
    pub fn is_answer_failure(&self) -> bool {
        match self {
            LlmError::ContextOverflow { .. }
            | LlmError::Rejected { .. }
            | LlmError::Exhausted { .. }
            | LlmError::BadResponse { .. }
            | LlmError::ReplayMiss { .. } => true,
            LlmError::Cache(_)
            | LlmError::Config { .. }
            | LlmError::Server(_)
            | LlmError::Unreachable { .. }
            | LlmError::Upstream(_) => false,
        }
    }
}

/// Refuses a wait setting (`field`, in seconds) that is not positive, finite and at most
/// [`mb_core::retry::MAX_WAIT_SECS`].
pub(crate) fn check_wait(field: &'static str, value: f64) -> Result<()> {
    mb_core::retry::check_wait(value)
        .map(|_| ())
        .map_err(|e| LlmError::Config {
            field,
            reason: e.to_string(),
        })
}
