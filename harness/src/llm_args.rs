//! `--llm` and `--llm-cache`: the flags that choose a command's [`LlmChoice`].

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use mb_engine::Engine;
use mb_llm::{
    AnswerStore, CacheMode, EngineAnswers, LlmChoice, LlmSettings, LlmStack, LocalServer,
};
use mb_upstream::{Upstream, Wording};

/// `--llm` and `--llm-cache`, flattened into every command that calls a model.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct LlmArgs {
    /// `offline` (deterministic heuristics, no model; the default), `local` (a small model
    /// served on this machine for the command's duration: configs/llm/local.toml, installed by
    /// scripts/setup.sh), or a role-settings file such as configs/llm/paper.toml (one with a
    /// `[server]` section starts that server).
    #[arg(
        long = "llm",
        value_name = "offline|local|FILE",
        default_value = "offline"
    )]
    pub llm: String,
    /// Record model answers in the store and reuse them, replay them only (a miss is an
    /// error), or neither.
    #[arg(long = "llm-cache", value_enum, default_value_t = CacheFlag::Record)]
    pub cache: CacheFlag,
    /// An upstream THUIR/MemoryBench checkout: every prompt that has upstream's words is then
    /// sent in them, read from the checkout's sources and checked against the known version
    /// (else `upstream = "DIR"` in the settings file; without either, the project's own
    /// paraphrase, which results label as not comparable with the paper).
    #[arg(long, value_name = "DIR", env = "MEMORYBENCH_UPSTREAM")]
    pub upstream: Option<PathBuf>,
    /// A LoRA adapter the `[server]` serves on top of its model (set by `sft-predict`, not a
    /// flag of its own).
    #[arg(skip)]
    pub lora: Option<PathBuf>,
}

/// The values of `--llm-cache`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheFlag {
    /// See [`CacheMode::Record`].
    Record,
    /// See [`CacheMode::Replay`].
    Replay,
    /// See [`CacheMode::Off`].
    Off,
}

impl LlmArgs {
    /// What the flags choose.
    pub fn choice(&self) -> LlmChoice {
        LlmChoice {
            llm: self.llm.clone(),
            cache: self.cache_mode(),
        }
    }

    /// The settings the flags select, as written (see [`LlmChoice::settings`]).
    pub fn settings(&self) -> mb_llm::Result<LlmSettings> {
        let settings = self.choice().settings()?;
        match &self.lora {
            Some(adapter) => settings.with_lora(adapter),
            None => Ok(settings),
        }
    }

    /// The settings to run with and the server they start (see [`LlmChoice::start`]).
    pub fn start(&self) -> mb_llm::Result<(LlmSettings, Option<LocalServer>)> {
        self.choice().serve(self.settings()?)
    }

    /// The LLM roles for `settings`, recording answers into (or replaying them from) `engine`
    /// as `--llm-cache` says.
    pub fn stack(&self, settings: &LlmSettings, engine: &Arc<Engine>) -> mb_llm::Result<LlmStack> {
        let answers: Option<Arc<dyn AnswerStore>> = match self.cache_mode() {
            CacheMode::Off => None,
            CacheMode::Record | CacheMode::Replay => {
                Some(Arc::new(EngineAnswers::open(engine.clone())?))
            }
        };
        Ok(LlmStack::build(settings, self.cache_mode(), answers)?
            .with_wording(self.wording(settings)?))
    }

    /// Whose words the prompts are in: upstream's, read from the checkout `--upstream` (or
    /// the settings' `upstream`) names, or the paraphrase.
    pub fn wording(&self, settings: &LlmSettings) -> mb_llm::Result<Wording> {
        match self.upstream.as_ref().or(settings.upstream.as_ref()) {
            Some(dir) => Ok(Wording::upstream(Upstream::open(dir)?)),
            None => Ok(Wording::paraphrased()),
        }
    }

    /// The record-cache mode.
    pub fn cache_mode(&self) -> CacheMode {
        match self.cache {
            CacheFlag::Record => CacheMode::Record,
            CacheFlag::Replay => CacheMode::Replay,
            CacheFlag::Off => CacheMode::Off,
        }
    }
}

/// The LLM roles, every one offline.
pub fn offline_llm() -> mb_llm::Result<Arc<LlmStack>> {
    Ok(Arc::new(LlmStack::build(
        &LlmSettings::default(),
        CacheMode::Off,
        None,
    )?))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        llm: LlmArgs,
    }

    #[test]
    fn defaults_to_offline_and_recording() {
        let cli = Cli::try_parse_from(["bin"]).unwrap();
        assert_eq!(cli.llm.settings().unwrap(), LlmSettings::default());
        assert_eq!(cli.llm.cache_mode(), CacheMode::Record);
    }

    #[test]
    fn reads_a_settings_file_and_a_cache_mode() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/llm/paper.toml");
        let cli = Cli::try_parse_from(["bin", "--llm", path, "--llm-cache", "replay"]).unwrap();
        assert!(!cli.llm.settings().unwrap().is_offline());
        assert_eq!(cli.llm.cache_mode(), CacheMode::Replay);
        assert!(Cli::try_parse_from(["bin", "--llm-cache", "sometimes"]).is_err());
    }
}
