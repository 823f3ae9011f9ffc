//! Choosing the LLM settings a command runs with: `offline`, `local` (the small model this
//! machine serves) or a settings file, and starting the server a choice needs. Binaries map
//! their flags onto an [`LlmChoice`].

use std::path::{Path, PathBuf};

use crate::error::{LlmError, Result};
use crate::local::{self, LocalServer};
use crate::record::CacheMode;
use crate::settings::LlmSettings;

/// The settings file `local` names, found like the `.cache/` assets (in the current
/// directory or above, else beside the executable or above).
pub const LOCAL_SETTINGS: &str = "configs/llm/local.toml";

/// The `local` settings as the checkout ships them ([`LOCAL_SETTINGS`]), for a program that
/// runs outside the checkout (the Python package) and points their `[server]` at its own files.
pub const LOCAL_SETTINGS_TEXT: &str = include_str!("../../configs/llm/local.toml");

/// Which settings to run with and what the record cache does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmChoice {
    /// `offline` (deterministic heuristics, no model), `local` ([`LOCAL_SETTINGS`]), or the
    /// path of a role-settings file such as `configs/llm/paper.toml`.
    pub llm: String,
    /// What the record cache does.
    pub cache: CacheMode,
}

impl LlmChoice {
    /// The settings chosen, as written: roles served by a `[server]` still name
    /// [`crate::SERVER_URL`] (stable across runs, so it can key caches). [`LlmChoice::start`]
    /// gives the settings to run with.
    pub fn settings(&self) -> Result<LlmSettings> {
        match self.llm.as_str() {
            "offline" => Ok(LlmSettings::default()),
            "local" => {
                let path = Path::new(LOCAL_SETTINGS);
                let found = mb_core::locate(path).ok_or_else(|| LlmError::Config {
                    field: "llm local",
                    reason: format!("no settings file {}", mb_core::searched(path)),
                })?;
                LlmSettings::from_file(&found)
            }
            file => LlmSettings::from_file(&PathBuf::from(file)),
        }
    }

    /// The settings to run with, and the server they start when they have a `[server]`
    /// section (with its roles pointed at it). Keep the server for as long as the command
    /// runs: dropping it stops it. Starting one also makes Ctrl-C and SIGTERM stop it
    /// ([`crate::stop_local_servers_on_signals`]). When the cache replays, no server starts:
    /// every answer comes from the record cache.
    pub fn start(&self) -> Result<(LlmSettings, Option<LocalServer>)> {
        self.serve(self.settings()?)
    }

    /// [`LlmChoice::start`] for `settings` derived from [`LlmChoice::settings`] (with an
    /// adapter, say: [`LlmSettings::with_lora`]).
    pub fn serve(&self, settings: LlmSettings) -> Result<(LlmSettings, Option<LocalServer>)> {
        if self.cache == CacheMode::Replay {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(llm: &str, cache: CacheMode) -> LlmChoice {
        LlmChoice {
            llm: llm.to_string(),
            cache,
        }
    }

    #[test]
    fn offline_and_a_settings_file() {
        assert_eq!(
            choice("offline", CacheMode::Record).settings().unwrap(),
            LlmSettings::default()
        );
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/llm/paper.toml");
        assert!(!choice(path, CacheMode::Replay)
            .settings()
            .unwrap()
            .is_offline());
        let missing = choice("no/such.toml", CacheMode::Record).settings();
        assert!(missing.unwrap_err().to_string().contains("no/such.toml"));
    }

    #[test]
    fn local_names_the_server_settings_and_replay_starts_no_server() {
        let local = choice("local", CacheMode::Replay);
        let settings = local.settings().unwrap();
        let server = settings
            .server
            .clone()
            .expect("local.toml has a [server] section");
        assert_eq!(
            settings.roles_on_server(),
            ["answer", "memory", "simulator", "judge", "critic"]
        );
        let (started, none) = local.start().unwrap();
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
        let error = choice(file.to_str().unwrap(), CacheMode::Record)
            .start()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("no-server.toml") && error.contains("role answer"),
            "{error}"
        );
    }
}
