//! A launch request from the page, checked field by field against the known choices and made
//! into the arguments of this same binary: every value is one of the choices or a checked
//! number, paths are the server's own, and no shell ever reads them.

use std::collections::BTreeMap;
use std::path::Path;

use mb_baselines::registry;
use serde::Deserialize;
use serde_json::Value;

use super::choices::Choices;
use super::reply::{ApiError, ApiResult};
use crate::commands::regimes::{FieldKind, Regime};

/// Most characters of an API key.
const LONGEST_KEY: usize = 4096;

/// What the page sends to launch a run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LaunchRequest {
    regime: String,
    dataset_type: String,
    set_name: String,
    baseline: String,
    llm: String,
    #[serde(default)]
    embedder: Option<String>,
    #[serde(default = "default_threads")]
    threads: u64,
    #[serde(default)]
    retrieve_k: Option<u64>,
    #[serde(default)]
    limit: Option<u64>,
    #[serde(default)]
    force: bool,
    #[serde(default)]
    extra: BTreeMap<String, Value>,
    #[serde(default)]
    keys: BTreeMap<String, String>,
}

fn default_threads() -> u64 {
    4
}

/// A checked launch.
#[derive(Debug)]
pub(crate) struct Launch {
    /// The subcommand and its arguments (without `--progress-file`, which is the job's).
    pub argv: Vec<String>,
    /// API keys by environment variable, for the run's environment only.
    pub keys: BTreeMap<String, String>,
}

/// Where launched runs go and what they read.
pub(crate) struct Places<'a> {
    /// `--output-dir`.
    pub runs: &'a Path,
    /// `--store`.
    pub store: &'a Path,
    /// `--data`, if any.
    pub data: Option<&'a Path>,
}

impl LaunchRequest {
    /// The arguments of the run this asks for, or the first field that is not a choice.
    pub fn check(self, choices: &Choices, places: &Places) -> ApiResult<Launch> {
        let regime = Regime::named(&self.regime)
            .ok_or_else(|| ApiError::field("regime", format!("no regime {:?}", self.regime)))?;
        let sets = choices
            .sets
            .get(self.dataset_type.as_str())
            .ok_or_else(|| {
                ApiError::field("dataset_type", "the dataset type is single, domain or task")
            })?;
        if !sets.contains(&self.set_name) {
            return Err(ApiError::field(
                "set_name",
                format!("no {} set {:?}", self.dataset_type, self.set_name),
            ));
        }
        let spec = registry::REGISTRY
            .iter()
            .find(|s| s.name == self.baseline)
            .ok_or_else(|| {
                ApiError::field("baseline", format!("no memory system {:?}", self.baseline))
            })?;
        if spec.memoryless && !regime.memoryless {
            return Err(ApiError::field(
                "baseline",
                format!("{} needs a memory: {} has none", regime.label, spec.name),
            ));
        }
        let kind = self
            .dataset_type
            .parse()
            .map_err(|_| ApiError::field("dataset_type", "not a dataset type"))?;
        if spec.skips(kind, &self.set_name) && !self.force {
            return Err(ApiError::field(
                "force",
                format!(
                    "{} is skipped on {}: {}; tick force to run it anyway",
                    spec.name, self.set_name, spec.skip_reason
                ),
            ));
        }
        let llm = choices
            .llm(&self.llm)
            .ok_or_else(|| ApiError::field("llm", format!("no model settings {:?}", self.llm)))?;
        let embedder = match &self.embedder {
            Some(name) => Some(
                choices
                    .embedder(name)
                    .ok_or_else(|| ApiError::field("embedder", format!("no embedder {name:?}")))?,
            ),
            None => None,
        };
        let number = |field: &'static str, value: u64, most: u64| {
            if value == 0 || value > most {
                Err(ApiError::field(field, format!("{field} is 1 to {most}")))
            } else {
                Ok(value.to_string())
            }
        };
        let mut argv: Vec<String> = vec![
            regime.id.into(),
            "--dataset-type".into(),
            self.dataset_type.clone(),
            "--set-name".into(),
            self.set_name.clone(),
            "--baseline".into(),
            spec.name.into(),
            "--llm".into(),
            llm.value.clone(),
            "--threads".into(),
            number(
                "threads",
                self.threads,
                crate::run::args::MAX_THREADS as u64,
            )?,
            "--output-dir".into(),
            path_text(places.runs)?,
            "--store".into(),
            path_text(places.store)?,
        ];
        if let Some(embedder) = embedder {
            argv.extend(["--embedder".into(), embedder.value.clone()]);
        }
        if let Some(k) = self.retrieve_k {
            argv.extend(["--retrieve-k".into(), number("retrieve_k", k, 10_000)?]);
        }
        if let Some(limit) = self.limit {
            argv.extend(["--limit".into(), number("limit", limit, 1_000_000_000)?]);
        }
        if self.force {
            argv.push("--force".into());
        }
        if let Some(data) = places.data {
            argv.extend(["--data".into(), path_text(data)?]);
        }
        let mut extra = self.extra;
        for field in regime.fields {
            let given = extra.remove(field.name);
            let value = match (&field.kind, given) {
                (FieldKind::Number { default, .. }, None) => default.to_string(),
                (FieldKind::Choice { default, .. }, None) => default.to_string(),
                (FieldKind::Number { min, max, .. }, Some(value)) => match value.as_i64() {
                    Some(n) if (*min..=*max).contains(&n) => n.to_string(),
                    _ => {
                        return Err(ApiError::field(
                            field.name,
                            format!("{} is a whole number from {min} to {max}", field.name),
                        ))
                    }
                },
                (FieldKind::Choice { options, .. }, Some(value)) => match value.as_str() {
                    Some(v) if options.contains(&v) => v.to_string(),
                    _ => {
                        return Err(ApiError::field(
                            field.name,
                            format!("{} is one of {}", field.name, options.join(", ")),
                        ))
                    }
                },
            };
            argv.extend([format!("--{}", field.name), value]);
        }
        if let Some(name) = extra.keys().next() {
            return Err(ApiError::field(
                name.clone(),
                format!("{} takes no {name:?}", regime.label),
            ));
        }
        let allowed: Vec<&String> = llm
            .key_envs
            .iter()
            .chain(embedder.iter().flat_map(|e| e.key_envs.iter()))
            .collect();
        let mut keys = BTreeMap::new();
        for (name, value) in self.keys {
            if !allowed.contains(&&name) {
                return Err(ApiError::field(
                    name.clone(),
                    format!("the chosen settings read no key {name:?}"),
                ));
            }
            if value.is_empty() {
                continue;
            }
            if value.len() > LONGEST_KEY || value.contains('\0') {
                return Err(ApiError::field(name.clone(), format!("{name}: not a key")));
            }
            keys.insert(name, value);
        }
        parses(&argv)?;
        Ok(Launch { argv, keys })
    }
}

fn path_text(path: &Path) -> ApiResult<String> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| ApiError::internal(format!("{}: not UTF-8", path.display())))
}

/// Checks that `argv` parses as its subcommand's arguments, as the launched process will.
fn parses(argv: &[String]) -> ApiResult<()> {
    let name = argv.first().map(String::as_str).unwrap_or_default();
    let regime = Regime::named(name).ok_or_else(|| ApiError::field("regime", "no such regime"))?;
    (regime.arguments)(clap::Command::new("mb-harness"))
        .try_get_matches_from(argv)
        .map(|_| ())
        .map_err(|e| ApiError::internal(format!("the launch's arguments do not parse: {e}")))
}
