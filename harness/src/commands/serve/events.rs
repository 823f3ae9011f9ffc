//! Following a job: `GET /api/jobs/{id}/events`, a server-sent event stream of its new log
//! lines (`log`), its bars (`progress`, the whole snapshot each time it changes), the run
//! directories it works in (`run_dir`) and its state (`state`). The stream ends after the
//! job has ended and its log has been sent; an event's id is the log offset it reached, so a
//! reconnecting browser (`Last-Event-ID`) is not sent lines twice.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path as UrlPath, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use serde_json::{json, Value};

use super::jobs::JobRecord;
use super::progress::{read_from, Progress};
use super::reply::{ApiError, ApiResult};
use super::Server;

/// How often a followed job's files are read.
const POLL: Duration = Duration::from_millis(300);
/// How much of the log a new follower is sent first.
const LOG_TAIL: u64 = 64 << 10;
/// Longest log line sent (longer ones are cut).
const LINE_CHARS: usize = 4000;

/// What a follower has sent so far.
struct Follow {
    server: Arc<Server>,
    id: String,
    folder: PathBuf,
    log_offset: u64,
    progress: Progress,
    sent_dirs: usize,
    /// The job's record when its state was last sent.
    last_record: Option<JobRecord>,
    queue: VecDeque<Event>,
    first: bool,
    done: bool,
}

impl Follow {
    /// Reads what is new and queues its events. The job's record is read first: once it says
    /// the job ended, the log read after it is whole, and its last lines go out before the
    /// final state (which ends the stream).
    fn poll(&mut self) {
        let record = self.server.jobs.record(&self.id);
        let log = self.folder.join("output.log");
        let mut lines = Vec::new();
        while let Some(bytes) = read_from(&log, self.log_offset).filter(|b| !b.is_empty()) {
            let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
                break;
            };
            self.log_offset += end as u64 + 1;
            let text = String::from_utf8_lossy(&bytes[..end]);
            lines.extend(
                text.split('\n')
                    .map(|l| mb_core::excerpt(&without_colors(l), LINE_CHARS).into_owned()),
            );
        }
        if !lines.is_empty() {
            self.push("log", json!(lines));
        }
        let mut changed = false;
        while self.progress.advance(&self.folder.join("progress.jsonl")) {
            changed = true;
        }
        if changed {
            let snapshot = self.progress.snapshot();
            self.push("progress", snapshot);
        }
        let announced = &self.progress.run_dirs[self.sent_dirs..];
        for dir in self.server.jobs.run_names(announced) {
            self.push("run_dir", json!(dir));
        }
        self.sent_dirs = self.progress.run_dirs.len();
        if record != self.last_record {
            let view = self.server.jobs.view(&self.id).unwrap_or(Value::Null);
            self.done = !record.as_ref().is_some_and(|r| r.state.is_live());
            self.push("state", view);
            self.last_record = record;
        }
    }

    fn push(&mut self, name: &str, data: Value) {
        let event = Event::default()
            .event(name)
            .id(self.log_offset.to_string())
            .data(data.to_string());
        self.queue.push_back(event);
    }
}

/// `GET /api/jobs/{id}/events`.
pub(crate) async fn stream(
    State(server): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
    headers: HeaderMap,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    if server.jobs.record(&id).is_none() {
        return Err(ApiError::missing("no such job"));
    }
    let folder = server.jobs.folder(&id);
    let log_len = std::fs::metadata(folder.join("output.log")).map_or(0, |m| m.len());
    let resumed = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&offset| offset <= log_len);
    let log_offset = resumed.unwrap_or_else(|| start_of_tail(&folder.join("output.log"), log_len));
    let follow = Follow {
        server,
        id,
        folder,
        log_offset,
        progress: Progress::default(),
        sent_dirs: 0,
        last_record: None,
        queue: VecDeque::new(),
        first: true,
        done: false,
    };
    let events = futures::stream::unfold(follow, |mut follow| async move {
        loop {
            if let Some(event) = follow.queue.pop_front() {
                return Some((Ok(event), follow));
            }
            if follow.done {
                return None;
            }
            if !follow.first {
                tokio::time::sleep(POLL).await;
            }
            follow.first = false;
            follow = tokio::task::spawn_blocking(move || {
                follow.poll();
                follow
            })
            .await
            .ok()?;
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// `line` without terminal colour codes (`ESC [ ... m` and the like).
fn without_colors(line: &str) -> String {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// Where the last [`LOG_TAIL`] bytes of the log begin, at a line's start.
fn start_of_tail(log: &Path, len: u64) -> u64 {
    if len <= LOG_TAIL {
        return 0;
    }
    let from = len - LOG_TAIL;
    read_from(log, from)
        .and_then(|bytes| bytes.iter().position(|&b| b == b'\n'))
        .map_or(len, |at| from + at as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_codes_are_taken_out_of_log_lines() {
        let line = "\u{1b}[2m2026\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m done";
        assert_eq!(without_colors(line), "2026  INFO done");
    }
}
