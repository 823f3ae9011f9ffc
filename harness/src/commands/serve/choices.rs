//! What a run can be launched with, as `GET /api/choices` lists it: the regimes (the table of
//! [`crate::commands::regimes`], with each one's own flags), the sets of the dataset catalog,
//! the memory systems of the registry, and the model and embedder settings files under
//! `configs/`. A new system,
//! set or settings file appears on the page without a change to it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::State;
use axum::Json;
use mb_baselines::registry::REGISTRY;
use mb_datasets::catalog::{Catalog, DatasetType};
use serde_json::{json, Value};

use super::Server;
use crate::commands::regimes::{FieldKind, Regime};
use crate::error::HarnessError;

/// A settings choice: what the page shows and what the run is given.
pub(crate) struct Setting {
    /// The name shown.
    pub name: String,
    /// The flag's value (`offline`, or a file's absolute path).
    pub value: String,
    /// The file's first comment line.
    pub description: String,
    /// Environment variables holding API keys the settings read.
    pub key_envs: Vec<String>,
}

/// The choices, read once when the server starts.
pub(crate) struct Choices {
    /// Set names per dataset type.
    pub sets: BTreeMap<&'static str, Vec<String>>,
    /// `--llm` values.
    pub llms: Vec<Setting>,
    /// `--embedder` values.
    pub embedders: Vec<Setting>,
}

impl Choices {
    /// Reads the catalog and the settings files.
    pub fn read() -> Result<Choices, HarnessError> {
        let catalog = Catalog::builtin()?;
        let mut sets = BTreeMap::new();
        for (name, kind) in [
            ("single", DatasetType::Single),
            ("domain", DatasetType::Domain),
            ("task", DatasetType::Task),
        ] {
            sets.insert(
                name,
                catalog
                    .set_names(kind)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
            );
        }
        let builtin = |name: &str, description: &str| Setting {
            name: name.into(),
            value: name.into(),
            description: description.into(),
            key_envs: Vec::new(),
        };
        let mut llms = vec![
            builtin("offline", "deterministic heuristics, no model"),
            builtin(
                "local",
                "SmolLM2 served on this machine (scripts/setup.sh installs it)",
            ),
        ];
        llms.extend(settings_files("configs/llm", &["offline", "local"], &[]));
        let mut embedders = vec![
            builtin("onnx", "all-MiniLM-L6-v2 in-process"),
            builtin("hashing", "model-free feature hashing, for quick runs"),
        ];
        embedders.extend(settings_files(
            "configs/embedder",
            &[],
            &[mb_embed::API_KEY_ENV],
        ));
        Ok(Choices {
            sets,
            llms,
            embedders,
        })
    }

    /// The `--llm` setting named `name`.
    pub fn llm(&self, name: &str) -> Option<&Setting> {
        self.llms.iter().find(|s| s.name == name)
    }

    /// The `--embedder` setting named `name`.
    pub fn embedder(&self, name: &str) -> Option<&Setting> {
        self.embedders.iter().find(|s| s.name == name)
    }
}

/// The `*.toml` files of `folder` (found as every settings path is) but those named in
/// `skip`, each with the key variables it names (`api_key_env`) and `always`.
fn settings_files(folder: &str, skip: &[&str], always: &[&str]) -> Vec<Setting> {
    let Some(dir) = mb_core::locate(Path::new(folder)) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let name = path.file_stem()?.to_str()?.to_string();
            if skip.contains(&name.as_str()) {
                return None;
            }
            let text = mb_core::files::read_text(&path, mb_core::files::SETTINGS_LIMIT).ok()?;
            let description = description(&text);
            let mut key_envs: Vec<String> = always.iter().map(|s| s.to_string()).collect();
            if let Ok(table) = text.parse::<toml::Table>() {
                key_variables(&toml::Value::Table(table), &mut key_envs);
            }
            key_envs.sort();
            key_envs.dedup();
            Some(Setting {
                name,
                value: path.display().to_string(),
                description,
                key_envs,
            })
        })
        .collect()
}

/// The first sentence of a settings file's opening comment (at most 200 characters).
fn description(text: &str) -> String {
    let comment: Vec<&str> = text
        .lines()
        .map_while(|l| l.strip_prefix('#'))
        .map(str::trim)
        .collect();
    let comment = comment.join(" ");
    let sentence = comment
        .split_once(". ")
        .map_or(comment.as_str(), |(first, _)| first);
    mb_core::excerpt(sentence.trim_end_matches('.'), 200).into_owned()
}

/// Every `api_key_env` value in `value`.
fn key_variables(value: &toml::Value, found: &mut Vec<String>) {
    match value {
        toml::Value::Table(table) => {
            for (key, value) in table {
                match (key.as_str(), value) {
                    ("api_key_env", toml::Value::String(name)) => found.push(name.clone()),
                    _ => key_variables(value, found),
                }
            }
        }
        toml::Value::Array(values) => values.iter().for_each(|v| key_variables(v, found)),
        _ => {}
    }
}

/// `GET /api/choices`.
pub(crate) async fn get_choices(State(server): State<Arc<Server>>) -> Json<Value> {
    let choices = &server.choices;
    let regimes: Vec<Value> = Regime::all()
        .iter()
        .map(|r| {
            let fields: Vec<Value> = r
                .fields
                .iter()
                .map(|f| match &f.kind {
                    FieldKind::Number { min, max, default } => json!({
                        "name": f.name, "label": f.label, "kind": "number",
                        "min": min, "max": max, "default": default,
                    }),
                    FieldKind::Choice { options, default } => json!({
                        "name": f.name, "label": f.label, "kind": "choice",
                        "options": options, "default": default,
                    }),
                })
                .collect();
            json!({"id": r.id, "label": r.label, "memoryless": r.memoryless, "fields": fields})
        })
        .collect();
    let systems: Vec<Value> = REGISTRY
        .iter()
        .map(|s| {
            let skips: Vec<Value> = s
                .skip_combinations
                .iter()
                .map(|(_, set)| json!({"set": set, "reason": s.skip_reason}))
                .collect();
            json!({
                "name": s.name,
                "paper_name": s.paper_name,
                "needs_embedder": s.needs_embedder,
                "memoryless": s.memoryless,
                "skips": skips,
            })
        })
        .collect();
    let settings = |list: &[Setting]| -> Vec<Value> {
        list.iter()
            .map(|s| json!({"name": s.name, "description": s.description, "key_envs": s.key_envs}))
            .collect()
    };
    Json(json!({
        "regimes": regimes,
        "dataset_types": choices.sets,
        "systems": systems,
        "llms": settings(&choices.llms),
        "embedders": settings(&choices.embedders),
        "defaults": {
            "regime": "off-policy",
            "dataset_type": "domain",
            "set_name": "Sample",
            "baseline": "bm25_message",
            "llm": "offline",
            "embedder": "onnx",
            "threads": 4,
        },
    }))
}
