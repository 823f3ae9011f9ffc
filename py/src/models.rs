//! The language models behind a binding: chosen by one `llm` argument as the harness's `--llm`
//! chooses them, with prompts in upstream's words when a checkout is named.

use std::path::PathBuf;

use mb_llm::{CacheMode, LlmChoice, LlmStack, LocalServer};
use mb_upstream::{Upstream, Wording};

use crate::errors::Raised;

/// Models ready to run, and the local server they need (stopped when dropped).
pub struct Models {
    /// Every role's backend.
    pub stack: LlmStack,
    /// The llama.cpp server of `llm="local"`, kept running as long as the models are.
    pub server: Option<LocalServer>,
}

/// `llm` is "offline" (no model: each operation's deterministic fallback; a metric that needs a
/// judge then fails), "local" (the llama.cpp server of configs/llm/local.toml, started now) or
/// a role-settings file. Prompts are in the words of the checkout `upstream`, else of the one
/// the settings name (`upstream = "DIR"`), else the project's paraphrase. Call without the GIL:
/// a local server takes seconds to start.
pub fn open_models(llm: &str, upstream: Option<PathBuf>) -> Result<Models, Raised> {
    let model_error = |e: mb_llm::LlmError| Raised::new("ModelError", e.to_string());
    let choice = LlmChoice {
        llm: llm.to_string(),
        cache: CacheMode::Off,
    };
    let (settings, server) = choice.start().map_err(model_error)?;
    let wording = match upstream.or_else(|| settings.upstream.clone()) {
        Some(dir) => Wording::upstream(
            Upstream::open(&dir)
                .map_err(|e| Raised::new("InvalidInputError", format!("upstream: {e}")))?,
        ),
        None => Wording::paraphrased(),
    };
    let stack = LlmStack::build(&settings, CacheMode::Off, None)
        .map_err(model_error)?
        .with_wording(wording);
    Ok(Models { stack, server })
}
