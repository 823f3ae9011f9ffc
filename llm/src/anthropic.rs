//! The Anthropic Messages API wire format.

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{json, Value};

use crate::endpoint::{excerpt, Endpoint, EndpointConfig};
use crate::error::{LlmError, Result};
use crate::think::strip_think;
use crate::{ChatProvider, ChatRequest, Completion, Role, Usage};

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A model behind the Anthropic Messages API; `base_url` is the host
/// (`https://api.anthropic.com`).
///
/// System messages are joined into the request's `system` field. The API has no
/// `response_format`; a request's constraint is left to the prompt and [`crate::extract_json`].
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    endpoint: Endpoint,
}

impl AnthropicProvider {
    /// A provider for `config` (reads the API key from `config.api_key_env`, if set).
    pub fn new(config: EndpointConfig) -> Result<AnthropicProvider> {
        Ok(AnthropicProvider {
            endpoint: Endpoint::new(config)?,
        })
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let messages: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role != Role::System)
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect();
        let mut body = json!({
            "model": self.endpoint.config.model,
            "messages": messages,
            "max_tokens": request.sampling.max_tokens,
            "temperature": request.sampling.temperature,
        });
        if let Some(top_p) = request.sampling.top_p {
            body["top_p"] = json!(top_p);
        }
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        body
    }

    fn parse(&self, body: &Value, retries: u32) -> Result<Completion> {
        let Some(blocks) = body["content"].as_array() else {
            return Err(LlmError::BadResponse {
                url: self.endpoint.url("/v1/messages"),
                detail: format!("no content blocks in {}", excerpt(&body.to_string())),
            });
        };
        let text: String = blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect();
        let usage = body["usage"].as_object().map(|usage| Usage {
            input_tokens: usage
                .get("input_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            output_tokens: usage
                .get("output_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        });
        Ok(Completion {
            text: strip_think(&text),
            usage,
            finish_reason: body["stop_reason"].as_str().map(str::to_string),
            retries,
            replayed: false,
        })
    }
}

#[async_trait]
impl ChatProvider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.endpoint.config.model
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Completion> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = self.endpoint.api_key() {
            let value = HeaderValue::from_str(key).map_err(|_| LlmError::Config {
                field: "api_key_env",
                reason: "the API key is not a valid header value".to_string(),
            })?;
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        let reply = self
            .endpoint
            .post("/v1/messages", headers, &self.body(request))
            .await?;
        self.parse(&reply.body, reply.retries)
    }
}
