//! Which model answers each role, from a configuration file.
//!
//! MemoryBench uses four models: the answering model, the model inside memory systems (fact
//! extraction, summaries, …), the user simulator, and the LLM judge. Each role is configured on
//! its own (`configs/llm/*.toml`); a role without an endpoint runs offline. [`LlmStack`] builds
//! the four backends with the record cache, the role's output limits and the shared accounting
//! ledger in front of every model.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mb_upstream::Wording;
use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::endpoint::EndpointConfig;
use crate::error::{LlmError, Result};
use crate::ledger::{Ledger, MeteredProvider, ModelUsage, TokenCounter};
use crate::limits::{LimitedProvider, OutputLimits};
use crate::local::ServerSettings;
use crate::ops::{Backend, OutputHandling, PromptLanguage};
use crate::record::AnswerStore;
use crate::record::{CacheMode, RecordedProvider};
use crate::{AnthropicProvider, ChatProvider, OpenAiProvider};

/// How one role reaches its model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "lowercase")]
pub enum RoleSettings {
    /// No model: the operations' deterministic offline implementations.
    #[default]
    Offline,
    /// An OpenAI-compatible endpoint (`provider = "openai"` or `"vllm"`).
    #[serde(alias = "vllm")]
    Openai(EndpointConfig),
    /// The Anthropic Messages API.
    Anthropic(EndpointConfig),
}

/// The five roles' settings (`configs/llm/*.toml`). Every role defaults to offline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct LlmSettings {
    /// The model that answers the user.
    pub answer: RoleSettings,
    /// The model memory systems call (Mem0, A-Mem, MemoryOS operations).
    pub memory: RoleSettings,
    /// The simulated user giving feedback.
    pub simulator: RoleSettings,
    /// The LLM judge of judged metrics.
    pub judge: RoleSettings,
    /// WritingBench's critic: upstream scores WritingBench with a fine-tuned critic model
    /// (`AQuarterMile/WritingBench-Critic-Model-Qwen-7B` on its own vLLM server,
    /// `WRITINGBENCH_VLLM_BASE_URL`), not with the judge.
    pub critic: RoleSettings,
    /// How unusable model output is handled: upstream's way per operation (the default) or
    /// tolerantly (see [`crate::ops::handling`]).
    pub output_handling: OutputHandling,
    /// The language of the memory role's own prompts: `english` (the default: upstream's
    /// memory systems prompt in English for every dataset) or `dataset` (our Chinese wording
    /// for Chinese datasets).
    pub memory_prompt_language: PromptLanguage,
    /// Corrective re-asks after unusable output before an operation falls back, with
    /// `output_handling = "tolerant"` (upstream's handling has none).
    pub reasks: u32,
    /// A `tokenizer.json` for counting tokens when a server reports no usage (else about four
    /// characters per token).
    pub tokenizer: Option<PathBuf>,
    /// A local model server that the command starts; roles reach it with
    /// `base_url = "server"` ([`SERVER_URL`]).
    pub server: Option<ServerSettings>,
    /// An upstream THUIR/MemoryBench checkout whose own prompt wording the roles send (see
    /// `mb_upstream`); `--upstream` and `MEMORYBENCH_UPSTREAM` take precedence.
    pub upstream: Option<PathBuf>,
    /// The memory systems' settings these models go with (a `--memory-config` file or
    /// directory, e.g. `configs/memory/paper`: the paper's models come with the paper's
    /// embedders); a run's own `--memory-config` takes precedence, saying so.
    pub memory_config: Option<PathBuf>,
}

/// The `base_url` of a role answered by the settings' own `[server]`, replaced by the started
/// server's URL.
pub const SERVER_URL: &str = "server";

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            answer: RoleSettings::Offline,
            memory: RoleSettings::Offline,
            simulator: RoleSettings::Offline,
            judge: RoleSettings::Offline,
            critic: RoleSettings::Offline,
            output_handling: OutputHandling::Upstream,
            memory_prompt_language: PromptLanguage::English,
            reasks: 2,
            tokenizer: None,
            server: None,
            upstream: None,
            memory_config: None,
        }
    }
}

impl LlmSettings {
    /// Reads settings from a TOML file; errors name the file, line and field.
    pub fn from_file(path: &Path) -> Result<LlmSettings> {
        let text =
            mb_core::files::read_text(path, mb_core::files::SETTINGS_LIMIT).map_err(|e| {
                LlmError::Config {
                    field: "settings file",
                    reason: format!("{}: {e}", path.display()),
                }
            })?;
        LlmSettings::from_text(&text, &path.display().to_string())
    }

    /// Reads settings from TOML `text`; errors name `origin` (a file), line and field.
    pub fn from_text(text: &str, origin: &str) -> Result<LlmSettings> {
        let settings: LlmSettings = mb_core::parse_toml(text).map_err(|e| LlmError::Config {
            field: "settings file",
            reason: format!("{origin}: {e}"),
        })?;
        for (role, role_settings) in settings.roles() {
            if let Err(LlmError::Config { field, reason }) = role_settings.output_limits() {
                return Err(LlmError::Config {
                    field,
                    reason: format!("{origin}: [{role}] {reason}"),
                });
            }
        }
        Ok(settings)
    }

    /// Every role answered by the model `model` of the OpenAI-compatible endpoint at `base_url`
    /// (Ollama, vLLM, llama.cpp's server, OpenAI itself): what a caller who has one endpoint
    /// gives, without a settings file. A key, if the endpoint needs one, is read from
    /// `OPENAI_API_KEY` when that is set.
    pub fn endpoint(base_url: &str, model: &str) -> LlmSettings {
        let config = crate::EndpointConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key_env: std::env::var_os("OPENAI_API_KEY").map(|_| "OPENAI_API_KEY".to_string()),
            ..crate::EndpointConfig::default()
        };
        let role = || RoleSettings::Openai(config.clone());
        LlmSettings {
            answer: role(),
            memory: role(),
            simulator: role(),
            judge: role(),
            critic: role(),
            ..LlmSettings::default()
        }
    }

    /// Each role's settings under its name.
    pub fn roles(&self) -> [(&'static str, &RoleSettings); 5] {
        [
            ("answer", &self.answer),
            ("memory", &self.memory),
            ("simulator", &self.simulator),
            ("judge", &self.judge),
            ("critic", &self.critic),
        ]
    }

    /// The settings with the LoRA adapter `adapter` served on top of the `[server]` model (the
    /// SFT baseline's, `mb-harness sft-train`). The alias becomes `<alias>+lora-<digest>` (the
    /// adapter file's first SHA-256 bytes), in the server and in every role that named the old
    /// one, so answers recorded from the plain model, or from another adapter, are never
    /// replayed as this one's. Settings without a `[server]` cannot serve an adapter.
    pub fn with_lora(mut self, adapter: &Path) -> Result<LlmSettings> {
        let Some(server) = self.server.as_mut() else {
            return Err(LlmError::Config {
                field: "server",
                reason: format!(
                    "the LoRA adapter {} is served by the local llama.cpp server: give --llm \
                     local, or a settings file with a [server] section",
                    adapter.display()
                ),
            });
        };
        let mut hasher = sha2::Sha256::new();
        std::fs::File::open(adapter)
            .and_then(|mut file| std::io::copy(&mut file, &mut hasher))
            .map_err(|e| LlmError::Config {
                field: "server.lora",
                reason: format!("{}: {e}", adapter.display()),
            })?;
        let digest = hasher.finalize();
        let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        let old = std::mem::take(&mut server.alias);
        server.alias = format!("{old}+lora-{hex}");
        server.lora = Some(adapter.to_path_buf());
        let alias = server.alias.clone();
        for role in self.roles_mut() {
            if let RoleSettings::Openai(endpoint) | RoleSettings::Anthropic(endpoint) = role {
                if endpoint.base_url == SERVER_URL && endpoint.model == old {
                    endpoint.model = alias.clone();
                }
            }
        }
        Ok(self)
    }

    /// The settings with every role whose `base_url` is [`SERVER_URL`] sent to `base_url`.
    pub fn served_at(mut self, base_url: &str) -> LlmSettings {
        for role in self.roles_mut() {
            if let RoleSettings::Openai(endpoint) | RoleSettings::Anthropic(endpoint) = role {
                if endpoint.base_url == SERVER_URL {
                    endpoint.base_url = base_url.to_string();
                }
            }
        }
        self
    }

    /// The roles that name [`SERVER_URL`] as their `base_url`.
    pub fn roles_on_server(&self) -> Vec<&'static str> {
        self.roles()
            .into_iter()
            .filter(|(_, role)| match role {
                RoleSettings::Openai(e) | RoleSettings::Anthropic(e) => e.base_url == SERVER_URL,
                RoleSettings::Offline => false,
            })
            .map(|(name, _)| name)
            .collect()
    }

    fn roles_mut(&mut self) -> [&mut RoleSettings; 5] {
        [
            &mut self.answer,
            &mut self.memory,
            &mut self.simulator,
            &mut self.judge,
            &mut self.critic,
        ]
    }

    /// Whether no role needs a model.
    pub fn is_offline(&self) -> bool {
        self.roles()
            .iter()
            .all(|(_, r)| **r == RoleSettings::Offline)
    }
}

impl RoleSettings {
    /// The output limits the role's requests are sent with (none offline).
    pub fn output_limits(&self) -> Result<OutputLimits> {
        match self {
            RoleSettings::Offline => Ok(OutputLimits::default()),
            RoleSettings::Openai(endpoint) | RoleSettings::Anthropic(endpoint) => {
                OutputLimits::of(endpoint)
            }
        }
    }
}

/// The five roles' backends, metered into one ledger.
pub struct LlmStack {
    /// Answers the user.
    pub answer: Backend,
    /// Runs memory-system operations.
    pub memory: Backend,
    /// Simulates user feedback.
    pub simulator: Backend,
    /// Judges answers.
    pub judge: Backend,
    /// Scores WritingBench's answers (upstream's fine-tuned critic).
    pub critic: Backend,
    /// Every model call of the five, by role and operation.
    pub ledger: Arc<Ledger>,
    /// Whose words the prompts are in: upstream's (`--upstream`) or the project's paraphrase.
    pub wording: Wording,
}

impl LlmStack {
    /// The same roles, their prompts in `wording`.
    pub fn with_wording(self, wording: Wording) -> LlmStack {
        LlmStack {
            answer: self.answer.with_wording(wording.clone()),
            memory: self.memory.with_wording(wording.clone()),
            simulator: self.simulator.with_wording(wording.clone()),
            judge: self.judge.with_wording(wording.clone()),
            critic: self.critic.with_wording(wording.clone()),
            ledger: self.ledger,
            wording,
        }
    }

    /// Each role's fallbacks so far as `role/operation`, and a fresh count (per-run accounting,
    /// like [`Ledger::take`]).
    pub fn take_fallbacks(&self) -> BTreeMap<String, u64> {
        self.by_role(Backend::take_fallbacks)
    }

    /// Each role's resends after unusable output so far as `role/operation`, and a fresh count.
    pub fn take_resends(&self) -> BTreeMap<String, u64> {
        self.by_role(Backend::take_resends)
    }

    /// Each role's operations that reached the resend cap as `role/operation`, and a fresh
    /// count.
    pub fn take_cap_hits(&self) -> BTreeMap<String, u64> {
        self.by_role(Backend::take_cap_hits)
    }

    /// Model calls and tokens over every role and fallbacks as `role/operation`, since the last
    /// [`Ledger::take`] and [`LlmStack::take_fallbacks`], resetting nothing: what a progress
    /// display shows while the run's accounting goes on.
    pub fn usage_so_far(&self) -> ModelUsage {
        let mut usage = ModelUsage {
            fallbacks: self.by_role(Backend::fallbacks),
            ..ModelUsage::default()
        };
        for stats in self.ledger.snapshot() {
            usage.calls += stats.calls;
            usage.input_tokens += stats.input_tokens;
            usage.output_tokens += stats.output_tokens;
        }
        usage
    }

    /// Whether any role calls a model.
    pub fn uses_a_model(&self) -> bool {
        self.roles()
            .iter()
            .any(|(_, backend)| !backend.is_offline())
    }

    /// Each role's backend under its name.
    pub fn roles(&self) -> [(&'static str, &Backend); 5] {
        [
            ("answer", &self.answer),
            ("memory", &self.memory),
            ("simulator", &self.simulator),
            ("judge", &self.judge),
            ("critic", &self.critic),
        ]
    }

    fn by_role(
        &self,
        read: impl Fn(&Backend) -> BTreeMap<&'static str, u64>,
    ) -> BTreeMap<String, u64> {
        self.roles()
            .into_iter()
            .flat_map(|(role, backend)| {
                read(backend)
                    .into_iter()
                    .map(move |(operation, count)| (format!("{role}/{operation}"), count))
            })
            .collect()
    }

    /// Builds the backends. Model roles go through the record cache (`cache`, kept in
    /// `answers`; required unless the cache is off) and the ledger.
    pub fn build(
        settings: &LlmSettings,
        cache: CacheMode,
        answers: Option<Arc<dyn AnswerStore>>,
    ) -> Result<LlmStack> {
        let ledger = Ledger::new();
        let backend = |role: &str, role_settings: &RoleSettings| -> Result<Backend> {
            let provider: Box<dyn ChatProvider> = match role_settings {
                RoleSettings::Offline => return Ok(Backend::offline()),
                RoleSettings::Openai(endpoint) => Box::new(OpenAiProvider::new(endpoint.clone())?),
                RoleSettings::Anthropic(endpoint) => {
                    Box::new(AnthropicProvider::new(endpoint.clone())?)
                }
            };
            let limits = role_settings.output_limits()?;
            let provider: Box<dyn ChatProvider> = match (cache, &answers) {
                (CacheMode::Off, _) => provider,
                (mode, Some(answers)) => {
                    Box::new(RecordedProvider::new(provider, mode, answers.clone()))
                }
                (_, None) => {
                    return Err(LlmError::Config {
                        field: "llm cache",
                        reason: "recording or replaying needs a store to keep answers in"
                            .to_string(),
                    })
                }
            };
            // Limits apply before the record cache keys the request.
            let provider: Box<dyn ChatProvider> = if limits.is_empty() {
                provider
            } else {
                Box::new(LimitedProvider::new(provider, limits))
            };
            let counter = match &settings.tokenizer {
                Some(path) => TokenCounter::from_file(path)?,
                None => TokenCounter::Heuristic,
            };
            let metered = MeteredProvider::new(provider, role, ledger.clone(), counter);
            Ok(Backend::model(
                Arc::new(metered),
                settings.output_handling,
                settings.reasks,
            ))
        };
        Ok(LlmStack {
            answer: backend("answer", &settings.answer)?,
            memory: backend("memory", &settings.memory)?
                .with_prompt_language(settings.memory_prompt_language),
            simulator: backend("simulator", &settings.simulator)?,
            judge: backend("judge", &settings.judge)?,
            critic: backend("critic", &settings.critic)?,
            ledger: ledger.clone(),
            wording: Wording::default(),
        })
    }
}
