//! The jobs' routes: list, launch, stop and resume, each a thin call into [`Jobs`](super::Jobs).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::write_record;
use crate::commands::serve::launch::{LaunchRequest, Places};
use crate::commands::serve::reply::{blocking, ApiError, ApiResult};
use crate::commands::serve::Server;

/// Job ids are the server's own: a timestamp and a count.
fn check_id(id: &str) -> ApiResult<()> {
    let plain = !id.is_empty()
        && id.len() <= 40
        && id
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase() || c == '-');
    if plain {
        Ok(())
    } else {
        Err(ApiError::bad("not a job id"))
    }
}

/// `GET /api/jobs`: every job, newest first.
pub(crate) async fn list(State(server): State<Arc<Server>>) -> ApiResult<Json<Value>> {
    blocking(move || {
        let ids: Vec<String> = server.jobs.table.lock().keys().rev().cloned().collect();
        let jobs: Vec<Value> = ids.iter().filter_map(|id| server.jobs.view(id)).collect();
        Ok(Json(Value::Array(jobs)))
    })
    .await
}

/// `GET /api/jobs/{id}`.
pub(crate) async fn one(
    State(server): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
) -> ApiResult<Json<Value>> {
    check_id(&id)?;
    blocking(move || {
        server
            .jobs
            .view(&id)
            .map(Json)
            .ok_or_else(|| ApiError::missing("no such job"))
    })
    .await
}

/// `POST /api/jobs`: launches the run a [`LaunchRequest`] asks for.
pub(crate) async fn launch(
    State(server): State<Arc<Server>>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let request: LaunchRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("not a launch request: {e}"),
        )
    })?;
    blocking(move || {
        let jobs = &server.jobs;
        let places = Places {
            runs: &jobs.root,
            store: &jobs.store,
            data: jobs.data.as_deref(),
        };
        let launch = request.check(&server.choices, &places)?;
        let id = jobs.start(launch.argv, launch.keys)?;
        Ok((StatusCode::CREATED, Json(json!({"id": id}))))
    })
    .await
}

/// `POST /api/jobs/{id}/stop`.
pub(crate) async fn stop(
    State(server): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    check_id(&id)?;
    blocking(move || {
        server.jobs.stop(&id)?;
        let view = server.jobs.view(&id).unwrap_or(Value::Null);
        Ok((StatusCode::ACCEPTED, Json(view)))
    })
    .await
}

/// The body of a resume: keys the server no longer holds.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResumeRequest {
    #[serde(default)]
    keys: BTreeMap<String, String>,
}

/// `POST /api/jobs/{id}/resume`: a new job continuing the stopped one's run with
/// `--resume RUN_DIR` (the run recorded its flags).
pub(crate) async fn resume(
    State(server): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    check_id(&id)?;
    let request: ResumeRequest = if body.is_empty() {
        ResumeRequest::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::field("keys", format!("not a resume request: {e}")))?
    };
    blocking(move || {
        let jobs = &server.jobs;
        let view = jobs
            .view(&id)
            .ok_or_else(|| ApiError::missing("no such job"))?;
        if view["resumable"] != Value::Bool(true) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "this job cannot be resumed: it runs, finished, or made no single run",
            ));
        }
        let (record, mut keys) = {
            let table = jobs.table.lock();
            let job = table
                .get(&id)
                .ok_or_else(|| ApiError::missing("no such job"))?;
            (job.record.clone(), job.keys.clone())
        };
        for (name, value) in request.keys {
            if !record.keys_given.contains(&name) {
                return Err(ApiError::field(
                    name.clone(),
                    format!("the job was given no key {name:?}"),
                ));
            }
            if !value.is_empty() {
                keys.insert(name, value);
            }
        }
        let run = jobs
            .run_dirs(&id)
            .into_iter()
            .next()
            .ok_or_else(|| ApiError::missing("no run"))?;
        let subcommand = record.argv.first().cloned().unwrap_or_default();
        let argv = vec![
            subcommand,
            "--resume".into(),
            jobs.root.join(run).display().to_string(),
        ];
        let new = jobs.start(argv, keys)?;
        // The keys the first job was given are the new one's too, if the server still holds
        // them; otherwise they were asked again.
        if let Some(job) = jobs.table.lock().get_mut(&new) {
            job.record.keys_given = record.keys_given.clone();
            write_record(&jobs.dir, &job.record);
        }
        Ok((StatusCode::CREATED, Json(json!({"id": new}))))
    })
    .await
}
