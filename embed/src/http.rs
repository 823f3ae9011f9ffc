//! Embeddings from an OpenAI-compatible `POST /v1/embeddings` endpoint.
//!
//! This is the paper's setup (vLLM serving Qwen3-Embedding-0.6B) and works with OpenAI,
//! llama.cpp's server and Ollama. Texts go out in batches; busy or failing servers (429, 5xx,
//! timeouts, refused connections) are retried with exponential backoff, honouring
//! `Retry-After`. With [`HttpConfig::shrink_overlong`], a text the server rejects is retried
//! with ever shorter prefixes (100 %, 99 %, … 2 % of its characters) and becomes a zero vector
//! if every prefix fails, as MemoryBench's embedder does.

use std::time::Duration;

use mb_core::retry::{
    check_wait, is_transient, retry_after, retry_blocking, Attempt, Backoff, RetryPolicy, Transient,
};
use reqwest::blocking::Client;
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};

use crate::error::{EmbedError, Result};
use crate::pooling::l2_normalize;
use crate::Embedder;

/// The longest wait between attempts, whatever `Retry-After` says or doubling reaches.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Environment variable holding the endpoint's API key (sent as a bearer token), if any.
pub const API_KEY_ENV: &str = "MB_EMBED_API_KEY";

/// Where and how to call an embeddings endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Base URL including the API version, e.g. `http://localhost:12377/v1`.
    pub base_url: String,
    /// The `model` field of each request, e.g. `Qwen/Qwen3-Embedding-0.6B`.
    pub model: String,
    /// Vector dimension; `None` asks the server once, on construction.
    pub dim: Option<usize>,
    /// Texts per request.
    pub batch_size: usize,
    /// Timeout of one request.
    #[serde(with = "seconds")]
    pub timeout: Duration,
    /// Retries of a request after a busy or failing server, before giving up.
    pub max_retries: u32,
    /// Wait before the first retry; doubled for each further one.
    #[serde(with = "seconds")]
    pub initial_backoff: Duration,
    /// Retry rejected texts with shorter prefixes, then fall back to a zero vector (upstream
    /// MemoryBench's behaviour for over-long inputs).
    pub shrink_overlong: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            base_url: "http://localhost:12377/v1".to_string(),
            model: "Qwen/Qwen3-Embedding-0.6B".to_string(),
            dim: None,
            batch_size: 64,
            timeout: Duration::from_secs(60),
            max_retries: 5,
            initial_backoff: Duration::from_millis(500),
            shrink_overlong: true,
        }
    }
}

/// An embedder backed by an OpenAI-compatible endpoint (see the module documentation).
pub struct HttpEmbedder {
    config: HttpConfig,
    url: String,
    client: Client,
    api_key: Option<String>,
    dim: usize,
}

/// Why a request produced no vectors.
enum Failure {
    /// The server refused these inputs (400, 413, 422): retrying the same text is pointless.
    Rejected(String),
    /// Anything else, after all retries.
    Fatal(EmbedError),
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: &'a [&'a str],
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

impl HttpEmbedder {
    /// Connects to the endpoint; asks it for the dimension when the configuration has none.
    pub fn new(config: HttpConfig) -> Result<HttpEmbedder> {
        if config.batch_size == 0 {
            return Err(EmbedError::Config {
                field: "batch_size",
                reason: "must be at least 1".to_string(),
            });
        }
        for (field, wait) in [
            ("timeout", config.timeout),
            ("initial_backoff", config.initial_backoff),
        ] {
            check_wait(wait.as_secs_f64()).map_err(|e| EmbedError::Config {
                field,
                reason: e.to_string(),
            })?;
        }
        let url = format!("{}/embeddings", config.base_url.trim_end_matches('/'));
        let client = Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| EmbedError::Http {
                url: url.clone(),
                detail: e.to_string(),
            })?;
        let api_key = std::env::var(API_KEY_ENV).ok().filter(|k| !k.is_empty());
        let mut embedder = HttpEmbedder {
            dim: config.dim.unwrap_or(0),
            config,
            url,
            client,
            api_key,
        };
        if embedder.config.dim.is_none() {
            let probe = embedder
                .request(&["dimension probe"])
                .map_err(|f| match f {
                    Failure::Rejected(detail) => EmbedError::Http {
                        url: embedder.url.clone(),
                        detail,
                    },
                    Failure::Fatal(e) => e,
                })?;
            embedder.dim = probe.first().map_or(0, Vec::len);
            if embedder.dim == 0 {
                return Err(EmbedError::BadResponse {
                    url: embedder.url.clone(),
                    detail: "empty embedding for the dimension probe".to_string(),
                });
            }
        }
        Ok(embedder)
    }

    /// The configuration this embedder runs with.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// One batch, all or nothing, with retries on transient failures.
    fn request(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, Failure> {
        let body = Request {
            model: &self.config.model,
            input: texts,
        };
        let policy = RetryPolicy {
            backoff: Backoff::new(self.config.initial_backoff, MAX_BACKOFF),
            max_retries: self.config.max_retries,
        };
        retry_blocking(
            policy,
            |_| self.attempt(&body, texts.len()),
            |wait, attempt, failure| {
                let detail = &failure.detail;
                tracing::warn!(url = %self.url, attempt, ?wait, %detail, "embedding request failed; retrying");
                std::thread::sleep(wait);
            },
            |last, attempts| {
                self.fatal(format!("gave up after {attempts} attempts: {}", last.detail))
            },
        )
        .map(|(vectors, _)| vectors)
    }

    /// One try at a batch.
    fn attempt(&self, body: &Request<'_>, expected: usize) -> Attempt<Vec<Vec<f32>>, Failure, ()> {
        let mut request = self.client.post(&self.url).json(body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let transient = |detail: String, retry_after: Option<Duration>| {
            Attempt::Transient(Transient {
                detail,
                retry_after,
                context: (),
            })
        };
        let response = match request.send() {
            Ok(response) => response,
            Err(e) => return transient(e.to_string(), None),
        };
        let status = response.status();
        if status.is_success() {
            return match response.text() {
                Ok(text) => match self.parse(&text, expected) {
                    Ok(vectors) => Attempt::Done(vectors),
                    Err(e) => Attempt::Fatal(Failure::Fatal(e)),
                },
                Err(e) => Attempt::Fatal(self.fatal(e.to_string())),
            };
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, MAX_BACKOFF));
        let body = response.text().unwrap_or_default();
        let detail = format!("HTTP {status}: {}", excerpt(&body));
        if matches!(
            status,
            StatusCode::BAD_REQUEST
                | StatusCode::PAYLOAD_TOO_LARGE
                | StatusCode::UNPROCESSABLE_ENTITY
        ) {
            return Attempt::Fatal(Failure::Rejected(detail));
        }
        if !is_transient(status.as_u16()) {
            return Attempt::Fatal(self.fatal(detail));
        }
        transient(detail, retry_after)
    }

    fn parse(&self, body: &str, expected: usize) -> Result<Vec<Vec<f32>>> {
        let bad = |detail: String| EmbedError::BadResponse {
            url: self.url.clone(),
            detail,
        };
        let response: Response =
            serde_json::from_str(body).map_err(|e| bad(format!("{e}: {}", excerpt(body))))?;
        if response.data.len() != expected {
            return Err(bad(format!(
                "{} embeddings for {expected} inputs",
                response.data.len()
            )));
        }
        let mut vectors = vec![Vec::new(); expected];
        for item in response.data {
            let slot = vectors
                .get_mut(item.index)
                .ok_or_else(|| bad(format!("index {} out of range", item.index)))?;
            *slot = item.embedding;
        }
        for vector in &mut vectors {
            if self.dim != 0 && vector.len() != self.dim {
                return Err(EmbedError::Dimension {
                    model: self.config.model.clone(),
                    expected: self.dim,
                    got: vector.len(),
                });
            }
            if vector.iter().any(|x| !x.is_finite()) {
                return Err(bad("non-finite component".to_string()));
            }
            l2_normalize(vector);
        }
        Ok(vectors)
    }

    fn fatal(&self, detail: String) -> Failure {
        Failure::Fatal(EmbedError::Http {
            url: self.url.clone(),
            detail,
        })
    }

    /// Upstream's fallback for a rejected text: shorter and shorter prefixes, then zeros.
    fn embed_shrinking(&self, text: &str) -> Result<Vec<f32>> {
        let chars = text.chars().count();
        let mut last = String::new();
        for percent in (2..=100).rev() {
            let prefix: String = text.chars().take(chars * percent / 100).collect();
            match self.request(&[prefix.as_str()]) {
                Ok(mut vectors) => return Ok(vectors.pop().unwrap_or_default()),
                Err(Failure::Rejected(detail)) => last = detail,
                Err(Failure::Fatal(e)) => return Err(e),
            }
        }
        tracing::warn!(url = %self.url, chars, %last, "every prefix was rejected; using a zero vector");
        Ok(vec![0.0; self.dim])
    }
}

impl Embedder for HttpEmbedder {
    fn model_id(&self) -> &str {
        &self.config.model
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.config.batch_size) {
            match self.request(batch) {
                Ok(batch_vectors) => vectors.extend(batch_vectors),
                Err(Failure::Fatal(e)) => return Err(e),
                Err(Failure::Rejected(detail)) if !self.config.shrink_overlong => {
                    return Err(EmbedError::Http {
                        url: self.url.clone(),
                        detail,
                    })
                }
                // Find the rejected text(s): each alone, shrinking only those refused.
                Err(Failure::Rejected(_)) => {
                    for text in batch {
                        vectors.push(self.embed_shrinking(text)?);
                    }
                }
            }
        }
        Ok(vectors)
    }
}

fn excerpt(body: &str) -> String {
    mb_core::retry::excerpt(body, 300)
}

mod seconds {
    //! `Duration` as (fractional) seconds in configuration files.
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}
