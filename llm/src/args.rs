//! Command-line flags that choose the LLM settings, for binaries to flatten into their own.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::error::{LlmError, Result};
use crate::local::{self, LocalServer};
use crate::record::CacheMode;
use crate::settings::LlmSettings;

/// The settings file `--llm local` names, found like the `.cache/` assets (in the current
/// directory or above, else beside the executable or above).
pub const LOCAL_SETTINGS: &str = "configs/llm/local.toml";

/// `--llm` and `--llm-cache`.
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
    /// The settings the flags select, as written: roles served by a `[server]` still name
    /// [`crate::SERVER_URL`] (stable across runs, so it can key caches). [`LlmArgs::start`]
    /// gives the settings to run with.
    pub fn settings(&self) -> Result<LlmSettings> {
        match self.llm.as_str() {
            "offline" => Ok(LlmSettings::default()),
            "local" => {
                let path = Path::new(LOCAL_SETTINGS);
                let found = local::locate(path).ok_or_else(|| LlmError::Config {
                    field: "--llm local",
                    reason: format!("no settings file {}", local::searched(path)),
                })?;
                LlmSettings::from_file(&found)
            }
            file => LlmSettings::from_file(&PathBuf::from(file)),
        }
    }

    /// The settings to run with, and the server they start when they have a `[server]`
    /// section (with its roles pointed at it). Keep the server for as long as the command
    /// runs: dropping it stops it. Starting one also makes Ctrl-C and SIGTERM stop it
    /// ([`crate::stop_local_servers_on_signals`]). With `--llm-cache replay` no server starts:
    /// every answer comes from the record cache.
    pub fn start(&self) -> Result<(LlmSettings, Option<LocalServer>)> {
        let settings = self.settings()?;
        if self.cache_mode() == CacheMode::Replay {
            return Ok((settings, None));
        }
        let Some(server_settings) = &settings.server else {
            if let Some(role) = settings.roles_on_server().first() {
                return Err(LlmError::Config {
                    field: "base_url",
                    reason: format!(
                        "{}: role {role} names base_url = \"{}\" but the file has no [server] \
                         section",
                        self.llm,
                        crate::SERVER_URL
                    ),
                });
            }
            return Ok((settings, None));
        };
        local::stop_local_servers_on_signals();
        let server = LocalServer::start(server_settings)?;
        let settings = settings.served_at(&server.base_url());
        Ok((settings, Some(server)))
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

    #[test]
    fn local_names_the_server_settings_and_replay_starts_no_server() {
        let cli = Cli::try_parse_from(["bin", "--llm", "local", "--llm-cache", "replay"]).unwrap();
        let settings = cli.llm.settings().unwrap();
        let server = settings
            .server
            .clone()
            .expect("local.toml has a [server] section");
        assert_eq!(
            settings.roles_on_server(),
            ["answer", "memory", "simulator", "judge"]
        );
        let (started, none) = cli.llm.start().unwrap();
        assert!(none.is_none());
        assert_eq!(started, settings);
        let served = settings.served_at("http://127.0.0.1:1/v1");
        assert!(served.roles_on_server().is_empty());
        assert_eq!(served.server, Some(server));
    }

    #[test]
    fn a_server_url_without_a_server_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("no-server.toml");
        std::fs::write(
            &file,
            "[answer]\nprovider = \"openai\"\nbase_url = \"server\"\nmodel = \"m\"\n",
        )
        .unwrap();
        let cli = Cli::try_parse_from(["bin", "--llm", file.to_str().unwrap()]).unwrap();
        let error = cli.llm.start().unwrap_err().to_string();
        assert!(
            error.contains("no-server.toml") && error.contains("role answer"),
            "{error}"
        );
    }
}
