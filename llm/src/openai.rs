//! The OpenAI-compatible `chat/completions` wire format (vLLM, OpenAI, llama.cpp, Ollama).

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use serde_json::{json, Value};

use crate::endpoint::{excerpt, Endpoint, EndpointConfig};
use crate::error::{LlmError, Result};
use crate::think::strip_think;
use crate::{ChatProvider, ChatRequest, Completion, ResponseFormat, Usage};

/// A model behind an OpenAI-compatible endpoint; `base_url` ends in the API version
/// (`http://localhost:12345/v1`).
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    endpoint: Endpoint,
}

impl OpenAiProvider {
    /// A provider for `config` (reads the API key from `config.api_key_env`, if set).
    pub fn new(config: EndpointConfig) -> Result<OpenAiProvider> {
        Ok(OpenAiProvider {
            endpoint: Endpoint::new(config)?,
        })
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let mut body = json!({
            "model": self.endpoint.config.model,
            "messages": request.messages,
            "temperature": request.sampling.temperature,
            "max_tokens": request.sampling.max_tokens,
        });
        if let Some(top_p) = request.sampling.top_p {
            body["top_p"] = json!(top_p);
        }
        if let Some(kwargs) = &self.endpoint.config.chat_template_kwargs {
            body["chat_template_kwargs"] = Value::Object(kwargs.clone());
        }
        match &request.response_format {
            None => {}
            Some(ResponseFormat::JsonObject) => {
                body["response_format"] = json!({"type": "json_object"});
            }
            Some(ResponseFormat::JsonSchema {
                name,
                schema,
                strict,
            }) => {
                let mut format = json!({"name": name, "schema": schema});
                if *strict {
                    format["strict"] = json!(true);
                }
                body["response_format"] = json!({"type": "json_schema", "json_schema": format});
            }
        }
        body
    }

    fn parse(&self, body: &Value, retries: u32) -> Result<Completion> {
        let choice = &body["choices"][0];
        let Some(content) = choice["message"]["content"].as_str() else {
            return Err(LlmError::BadResponse {
                url: self.endpoint.url("/chat/completions"),
                detail: format!(
                    "no choices[0].message.content in {}",
                    excerpt(&body.to_string())
                ),
            });
        };
        let usage = body["usage"].as_object().map(|usage| Usage {
            input_tokens: usage
                .get("prompt_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            output_tokens: usage
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        });
        Ok(Completion {
            text: strip_think(content),
            usage,
            finish_reason: choice["finish_reason"].as_str().map(str::to_string),
            retries,
            replayed: false,
        })
    }
}

#[async_trait]
impl ChatProvider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.endpoint.config.model
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Completion> {
        let mut headers = HeaderMap::new();
        if let Some(key) = self.endpoint.api_key() {
            let value =
                HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| LlmError::Config {
                    field: "api_key_env",
                    reason: "the API key is not a valid header value".to_string(),
                })?;
            headers.insert(AUTHORIZATION, value);
        }
        let reply = self
            .endpoint
            .post("/chat/completions", headers, &self.body(request))
            .await?;
        self.parse(&reply.body, reply.retries)
    }
}
