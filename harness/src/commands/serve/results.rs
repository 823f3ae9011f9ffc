//! Browsing runs: `GET /api/runs` (every run directory under the runs directory, newest
//! first), `GET /api/run` (one run's configuration, summary and steps) and `GET /api/report`
//! (the `report` command's tables and charts, grouped by comparable runs).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::Json;
use mb_eval::{RUN_CONFIG, SUMMARY};
use serde::Deserialize;
use serde_json::{json, Value};

use super::reply::{blocking, ApiError, ApiResult};
use super::Server;
use crate::commands::report::step_order;

/// Largest run file read for a listing (`run_config.json`, `summary.json`).
const SMALL_FILE: u64 = 16 << 20;

/// A small JSON file of a run, if it is there and reads.
pub(crate) fn small_json(path: &Path) -> Option<Value> {
    let text = mb_core::files::read_text(path, SMALL_FILE).ok()?;
    serde_json::from_str(&text).ok()
}

/// The steps of a run directory (`begin`, `[0,8)`, `step_1`), in order: its subdirectories
/// holding answers.
pub(crate) fn steps(run: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(run) else {
        return Vec::new();
    };
    let mut steps: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let dir = e.path();
            [SUMMARY, "test_predicts.json", crate::run::cases::PARTIAL]
                .iter()
                .any(|f| dir.join(f).is_file())
        })
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    steps.sort_by_key(|s| (step_order(s), s.clone()));
    steps
}

/// The score a summary leads with.
fn score(summary: &Value) -> Option<f64> {
    summary["summary"]["average"].as_f64()
}

/// One run as the list shows it.
fn listed(server: &Server, dir: &Path, live: &[PathBuf]) -> Option<Value> {
    let name = server.runs.name_of(dir)?;
    let config = small_json(&dir.join(RUN_CONFIG))?;
    let summary = small_json(&dir.join(SUMMARY));
    let steps = steps(dir);
    let last_step_summary = steps
        .last()
        .and_then(|s| small_json(&dir.join(s).join(SUMMARY)));
    let shown = summary.as_ref().or(last_step_summary.as_ref());
    let running = live.iter().any(|l| l == dir);
    let complete = !running
        && (summary.is_some()
            || (!steps.is_empty() && steps.iter().all(|s| dir.join(s).join(SUMMARY).is_file())));
    let text = |key: &str| config[key].clone();
    let started = dir
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.trim_start_matches("start_at_").to_string());
    Some(json!({
        "run": name,
        // Recorded as the results folder (`off-policy/results`): its first part names it.
        "regime": config["regime"].as_str().and_then(|r| r.split('/').next()),
        "dataset_type": text("dataset_type"),
        "set_name": text("set_name"),
        "system": text("memory_system"),
        "llm": config["llm"].as_str().map(|l| Path::new(l).file_stem().and_then(|s| s.to_str()).unwrap_or(l).to_string()),
        "limit": text("limit"),
        "started": started,
        "cases": shown.and_then(|s| s["timing"]["cases"].as_u64()),
        "score": shown.and_then(score),
        "complete": complete,
        "running": running,
        "steps": steps,
    }))
}

/// `GET /api/runs`.
pub(crate) async fn runs(State(server): State<Arc<Server>>) -> ApiResult<Json<Value>> {
    blocking(move || {
        let live: Vec<PathBuf> = server
            .jobs
            .live_run_dirs()
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok())
            .collect();
        let mut runs: Vec<Value> = server
            .runs
            .list()
            .iter()
            .filter_map(|dir| listed(&server, dir, &live))
            .collect();
        runs.sort_by(|a, b| {
            (b["started"].as_str(), b["run"].as_str())
                .cmp(&(a["started"].as_str(), a["run"].as_str()))
        });
        Ok(Json(json!({ "runs": runs })))
    })
    .await
}

/// A run's name in a query.
#[derive(Debug, Deserialize)]
pub(crate) struct RunQuery {
    run: String,
}

/// `GET /api/run?run=NAME`.
pub(crate) async fn run(
    State(server): State<Arc<Server>>,
    Query(query): Query<RunQuery>,
) -> ApiResult<Json<Value>> {
    blocking(move || {
        let dir = server.runs.run(&query.run)?;
        let config = small_json(&dir.join(RUN_CONFIG))
            .ok_or_else(|| ApiError::missing("the run's configuration does not read"))?;
        let steps: Vec<Value> = steps(&dir)
            .into_iter()
            .map(|name| {
                let summary = small_json(&dir.join(&name).join(SUMMARY));
                json!({"name": name, "summary": summary})
            })
            .collect();
        Ok(Json(json!({
            "run": query.run,
            "config": config,
            "summary": small_json(&dir.join(SUMMARY)),
            "steps": steps,
        })))
    })
    .await
}

/// `GET /api/report`: the report's body for every run under the runs directory.
pub(crate) async fn report(State(server): State<Arc<Server>>) -> ApiResult<Json<Value>> {
    blocking(move || {
        let dirs = server.runs.list();
        if dirs.is_empty() {
            return Err(ApiError::missing("no runs yet"));
        }
        match crate::commands::report::report_body(&dirs)? {
            Some(html) => Ok(Json(json!({ "html": html }))),
            None => Err(ApiError::missing("no finished runs yet")),
        }
    })
    .await
}
