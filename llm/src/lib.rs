//! `mb-llm`: every LLM call of memorybench-rs goes through this crate.
//!
//! A [`ChatProvider`] turns a [`ChatRequest`] into a [`Completion`]. Two wire formats are
//! implemented, [`OpenAiProvider`] (vLLM, OpenAI, llama.cpp server, Ollama: any
//! OpenAI-compatible `chat/completions`) and [`AnthropicProvider`] (Messages API), on one
//! [`EndpointConfig`] that adds timeouts, retries with backoff and jitter, a concurrency
//! limit, and typed errors that tell a context overflow from a rejected request. Reasoning
//! blocks are stripped from every answer, and [`extract_json`] finds JSON in free-form output.
//!
//! Memory systems call models through typed operations ([`ops`]): each owns its prompt, parser,
//! fallback and a deterministic offline implementation, and an [`ops::Backend`] runs them on a
//! model or offline.
//!
//! Providers compose: a [`RecordedProvider`] stores answers in an [`AnswerStore`] (in the engine
//! with the `engine` feature) and replays them, and
//! a [`MeteredProvider`] enters every call in a [`Ledger`] under its role and operation, and a
//! [`LimitedProvider`] sends requests with a role's [`OutputLimits`].

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod anthropic;
mod choice;
mod endpoint;
mod error;
mod json;
mod ledger;
mod limits;
mod local;
mod openai;
pub mod ops;
mod reachable;
mod record;
mod replicas;
mod settings;
#[cfg(feature = "testing")]
pub mod testing;
mod think;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use anthropic::{AnthropicProvider, ANTHROPIC_VERSION};
pub use choice::{LlmChoice, LOCAL_SETTINGS, LOCAL_SETTINGS_TEXT};
pub use endpoint::EndpointConfig;
pub use error::{LlmError, Result};
pub use json::extract_json;
pub use ledger::{usage_of, Ledger, MeteredProvider, ModelUsage, OperationStats, TokenCounter};
pub use limits::{LimitedProvider, OutputLimits};
pub use local::{
    say_on_interrupt, stop_local_servers_on_signals, LocalServer, ServerSettings, SETUP_COMMAND,
};
pub use mb_core::{Message, Role};
pub use openai::OpenAiProvider;
pub use reachable::{check_reachable, CONNECT_TIMEOUT};
pub use record::{AnswerStore, CacheMode, RecordedProvider};
#[cfg(feature = "engine")]
pub use record::{EngineAnswers, RECORD_NAMESPACE};
pub use settings::{LlmSettings, LlmStack, RoleSettings, SERVER_URL};
pub use think::strip_think;

/// Sampling parameters, defaulting to upstream MemoryBench's (temperature 0.1, top-p 0.1,
/// 2048 output tokens).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Sampling {
    /// Sampling temperature.
    pub temperature: f64,
    /// Nucleus sampling mass; `None` sends none, leaving the server's default (as upstream's
    /// A-Mem client does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Most output tokens.
    pub max_tokens: u32,
}

impl Sampling {
    /// Sampling with these parameters (an operation's own, where upstream sets them).
    pub const fn new(temperature: f64, top_p: f64, max_tokens: u32) -> Sampling {
        Sampling {
            temperature,
            top_p: Some(top_p),
            max_tokens,
        }
    }

    /// Sampling that sends no top-p, for a client of upstream's that sends none.
    pub const fn without_top_p(temperature: f64, max_tokens: u32) -> Sampling {
        Sampling {
            temperature,
            top_p: None,
            max_tokens,
        }
    }
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.1,
            top_p: Some(0.1),
            max_tokens: 2048,
        }
    }
}

/// A structured-output constraint passed through to servers that support it (OpenAI-compatible
/// `response_format`; vLLM enforces it with guided decoding).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ResponseFormat {
    /// Any JSON object.
    JsonObject,
    /// JSON matching a schema.
    JsonSchema {
        /// Schema name.
        name: String,
        /// The JSON schema.
        schema: serde_json::Value,
        /// Whether the request marks the schema `strict` (upstream does for A-Mem's keywords
        /// and evolution, not for its note analysis or the user simulator). Recorded only when
        /// false, so the record keys of strict schemas stay as they were.
        #[serde(default = "strict_by_default", skip_serializing_if = "is_strict")]
        strict: bool,
    },
}

fn strict_by_default() -> bool {
    true
}

fn is_strict(strict: &bool) -> bool {
    *strict
}

/// One chat completion request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Which operation asks (`answer`, `extract_facts`, …): labels accounting and errors; never
    /// sent to the model.
    pub operation: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Sampling parameters.
    pub sampling: Sampling,
    /// Structured-output constraint, if any.
    pub response_format: Option<ResponseFormat>,
    /// How many times this same request was sent before (upstream's resends after unusable
    /// output): never sent to the model, but part of a record cache's key, so a replayed run
    /// meets the same sequence of replies.
    pub resend: u32,
}

impl ChatRequest {
    /// A request with default sampling and no output constraint.
    pub fn new(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            operation: "chat".to_string(),
            messages,
            sampling: Sampling::default(),
            response_format: None,
            resend: 0,
        }
    }

    /// The same request labelled with an operation name.
    pub fn with_operation(mut self, operation: impl Into<String>) -> ChatRequest {
        self.operation = operation.into();
        self
    }
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// The answer with reasoning blocks removed.
    pub text: String,
    /// Token usage, when the server reports it.
    pub usage: Option<Usage>,
    /// Why generation stopped (`stop`, `length`, `end_turn`, …), when reported.
    pub finish_reason: Option<String>,
    /// Retries the request needed.
    pub retries: u32,
    /// Whether the answer came from the record cache instead of the model.
    pub replayed: bool,
}

/// Something that answers chat requests.
#[async_trait]
pub trait ChatProvider: Send + Sync {
    /// The wire format or backend (`openai`, `anthropic`, `offline`).
    fn name(&self) -> &str;

    /// The model that answers.
    fn model(&self) -> &str;

    /// Answers one request.
    async fn complete(&self, request: &ChatRequest) -> Result<Completion>;
}

#[async_trait]
impl<P: ChatProvider + ?Sized> ChatProvider for Box<P> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn model(&self) -> &str {
        (**self).model()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Completion> {
        (**self).complete(request).await
    }
}
