//! The `[server]` section of an LLM settings file, and where its files are on disk.
//!
//! `scripts/setup.sh` installs the server's Python (with xllamacpp) and the default model under
//! the checkout's `.cache/`, and the launcher lives in `scripts/`. Relative paths are found as
//! the embedding assets are: in the current directory or above it, else next to the running
//! executable or above it, so a command works from any folder of the checkout and a binary
//! moved elsewhere still finds a checkout it runs in.

use std::path::PathBuf;

use mb_core::{locate, searched};
use serde::{Deserialize, Serialize};

/// The command that installs the server's Python packages and the default model.
pub const SETUP_COMMAND: &str = "bash scripts/setup.sh";

/// How to run a local model server (`[server]` in `configs/llm/local.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerSettings {
    /// The GGUF model file served; any llama.cpp model works.
    pub model: PathBuf,
    /// The model name the server answers to; roles send it as their `model`, and it keys the
    /// record cache, so give each model file its own alias.
    pub alias: String,
    /// Context tokens of each request (the server reserves this much per parallel slot).
    pub ctx: u32,
    /// CPU threads generating; 0 lets llama.cpp choose.
    pub threads: u32,
    /// Requests the server decodes at once.
    pub parallel: u32,
    /// The Python that has xllamacpp.
    pub python: PathBuf,
    /// The launcher script run by `python`.
    pub launcher: PathBuf,
    /// Loopback port to listen on; 0 takes a free one.
    pub port: u16,
    /// Longest wait for the server to load the model and answer `/health`, in seconds.
    pub startup_timeout_secs: f64,
    /// A LoRA adapter GGUF served on top of the model (applied to every request), such as
    /// the SFT baseline's (`mb-harness sft-train`). Give the alias a name of its own too: it
    /// keys the record cache.
    pub lora: Option<PathBuf>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            model: PathBuf::from(".cache/models/smollm2-135m-instruct-q4_1/model.gguf"),
            alias: "smollm2-135m-instruct-q4_1".to_string(),
            ctx: 8192,
            threads: 0,
            parallel: 1,
            python: PathBuf::from(".cache/venv/bin/python"),
            launcher: PathBuf::from("py/memorybench/llm_server.py"),
            port: 0,
            startup_timeout_secs: 60.0,
            lora: None,
        }
    }
}

impl ServerSettings {
    /// The model file, found as [`LocalServer::start`](super::LocalServer::start) finds it; an
    /// error says where it looked.
    pub fn model_file(&self) -> crate::Result<PathBuf> {
        locate(&self.model).ok_or_else(|| crate::LlmError::Config {
            field: "server.model",
            reason: format!(
                "no model file {}: run {SETUP_COMMAND}, or name an existing GGUF file as model \
                 in [server]",
                searched(&self.model)
            ),
        })
    }
}
