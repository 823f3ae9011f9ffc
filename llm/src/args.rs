//! Command-line flags that choose the LLM settings, for binaries to flatten into their own.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::error::Result;
use crate::record::CacheMode;
use crate::settings::LlmSettings;

/// `--llm` and `--llm-cache`.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct LlmArgs {
    /// `offline` (deterministic heuristics, no model; the default) or a role-settings file such
    /// as configs/llm/paper.toml.
    #[arg(long = "llm", value_name = "offline|FILE", default_value = "offline")]
    pub llm: String,
    /// Record model answers in the engine and reuse them, replay them only (a miss is an
    /// error), or neither.
    #[arg(long = "llm-cache", value_enum, default_value_t = CacheFlag::Record)]
    pub cache: CacheFlag,
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
    /// The settings the flags select.
    pub fn settings(&self) -> Result<LlmSettings> {
        if self.llm == "offline" {
            Ok(LlmSettings::default())
        } else {
            LlmSettings::from_file(&PathBuf::from(&self.llm))
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
        let missing = Cli::try_parse_from(["bin", "--llm", "no/such.toml"]).unwrap();
        assert!(missing
            .llm
            .settings()
            .unwrap_err()
            .to_string()
            .contains("no/such.toml"));
    }
}
