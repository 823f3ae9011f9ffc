//! Output limits: the most tokens a role's model is asked to generate.
//!
//! Upstream asks for 2048 output tokens unless an operation sets its own (A-Mem 2000, the
//! simulator 1000, judges 1024 or 4096), which suits an 8B model that stops when it is done. A
//! small model rambles to whatever limit it is given, so a memory operation can take minutes. A
//! role's `max_tokens` caps every request it sends, and its `max_tokens_per_operation` table caps
//! named operations (taking precedence over the role's cap). A limit only lowers: an operation
//! asking for less keeps its own value. Without limits (the default) every request goes out as
//! upstream sends it. The limit is applied before the record cache keys the request, so an answer
//! recorded under one limit is never replayed under another.

use std::borrow::Cow;
use std::collections::BTreeMap;

use async_trait::async_trait;

use crate::endpoint::EndpointConfig;
use crate::error::{LlmError, Result};
use crate::ops::OPERATION_NAMES;
use crate::{ChatProvider, ChatRequest, Completion};

/// A role's output limits, checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputLimits {
    role: Option<u32>,
    per_operation: BTreeMap<String, u32>,
}

impl OutputLimits {
    /// The limits `config` sets. A limit of zero, or an operation name no operation has, is an
    /// error naming the field.
    pub fn of(config: &EndpointConfig) -> Result<OutputLimits> {
        if config.max_tokens == Some(0) {
            return Err(LlmError::Config {
                field: "max_tokens",
                reason: "must be at least 1".to_string(),
            });
        }
        for (operation, &limit) in &config.max_tokens_per_operation {
            if !OPERATION_NAMES.contains(&operation.as_str()) {
                return Err(LlmError::Config {
                    field: "max_tokens_per_operation",
                    reason: format!(
                        "no operation is called {operation:?}; operations: {}",
                        OPERATION_NAMES.join(", ")
                    ),
                });
            }
            if limit == 0 {
                return Err(LlmError::Config {
                    field: "max_tokens_per_operation",
                    reason: format!("{operation}: must be at least 1"),
                });
            }
        }
        Ok(OutputLimits {
            role: config.max_tokens,
            per_operation: config.max_tokens_per_operation.clone(),
        })
    }

    /// Whether no limit is set (requests go out unchanged).
    pub fn is_empty(&self) -> bool {
        self.role.is_none() && self.per_operation.is_empty()
    }

    /// The limit on `operation`'s output: its own entry, else the role's.
    pub fn cap(&self, operation: &str) -> Option<u32> {
        self.per_operation.get(operation).copied().or(self.role)
    }

    /// `request` with its output limit lowered to the cap, if one applies and is lower.
    pub fn apply<'a>(&self, request: &'a ChatRequest) -> Cow<'a, ChatRequest> {
        match self.cap(&request.operation) {
            Some(cap) if cap < request.sampling.max_tokens => {
                let mut capped = request.clone();
                capped.sampling.max_tokens = cap;
                Cow::Owned(capped)
            }
            _ => Cow::Borrowed(request),
        }
    }
}

/// A provider whose requests are sent with a role's output limits.
pub struct LimitedProvider<P> {
    inner: P,
    limits: OutputLimits,
}

impl<P: ChatProvider> LimitedProvider<P> {
    /// Sends `inner`'s requests with `limits` applied.
    pub fn new(inner: P, limits: OutputLimits) -> LimitedProvider<P> {
        LimitedProvider { inner, limits }
    }
}

#[async_trait]
impl<P: ChatProvider> ChatProvider for LimitedProvider<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Completion> {
        self.inner.complete(&self.limits.apply(request)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    fn request(operation: &str, max_tokens: u32) -> ChatRequest {
        let mut request = ChatRequest::new(vec![Message::user("hi")]).with_operation(operation);
        request.sampling.max_tokens = max_tokens;
        request
    }

    #[test]
    fn an_operation_entry_beats_the_role_cap_and_limits_only_lower() {
        let config = EndpointConfig {
            max_tokens: Some(256),
            max_tokens_per_operation: BTreeMap::from([("answer".to_string(), 128)]),
            ..EndpointConfig::default()
        };
        let limits = OutputLimits::of(&config).unwrap();
        let sent = |operation, asked| limits.apply(&request(operation, asked)).sampling.max_tokens;
        assert_eq!(sent("answer", 2048), 128);
        assert_eq!(sent("extract_facts", 2048), 256);
        assert_eq!(
            sent("simulate_feedback", 100),
            100,
            "a lower own value stays"
        );
        assert!(OutputLimits::of(&EndpointConfig::default())
            .unwrap()
            .is_empty());
    }
}
