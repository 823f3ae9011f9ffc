//! Following a job: its progress file folded into the bars' current counts, and
//! `GET /api/jobs/{id}/events`, a server-sent event stream of the job's new log lines
//! (`log`), its bars (`progress`, the whole snapshot each time it changes), the run
//! directories it works in (`run_dir`) and its state (`state`). The stream ends after the
//! job has ended and its log has been sent; an event's id is the log offset it reached, so a
//! reconnecting browser (`Last-Event-ID`) is not sent lines twice.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path as UrlPath, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use serde_json::{json, Value};

use super::jobs::JobRecord;
use super::reply::{ApiError, ApiResult};
use super::Server;

/// How often a followed job's files are read.
const POLL: Duration = Duration::from_millis(300);
/// How much of the log a new follower is sent first.
const LOG_TAIL: u64 = 64 << 10;
/// Most bytes read from a file per poll.
const READ_STEP: usize = 1 << 20;
/// Longest log line sent (longer ones are cut).
const LINE_CHARS: usize = 4000;

/// One bar's counts.
#[derive(Debug, Clone, Default)]
struct Bar {
    label: String,
    unit: String,
    pos: u64,
    len: Option<u64>,
    calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    fallbacks: u64,
    done: bool,
}

/// A progress file folded as far as it has been read.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    bars: BTreeMap<u64, Bar>,
    /// The run directories the job announced, as written (absolute).
    pub run_dirs: Vec<String>,
    offset: u64,
    /// An incomplete last line.
    pending: Vec<u8>,
}

impl Progress {
    /// The whole of the file at `path` folded (empty when it cannot be read).
    pub fn read(path: &Path) -> Progress {
        let mut progress = Progress::default();
        while progress.advance(path) {}
        progress
    }

    /// Folds what was appended to `path` since the last call (a bounded step); whether any
    /// line was read.
    fn advance(&mut self, path: &Path) -> bool {
        let Some(bytes) = read_from(path, self.offset) else {
            return false;
        };
        if bytes.is_empty() {
            return false;
        }
        self.offset += bytes.len() as u64;
        self.pending.extend_from_slice(&bytes);
        let Some(end) = self.pending.iter().rposition(|&b| b == b'\n') else {
            return true;
        };
        let complete: Vec<u8> = self.pending.drain(..=end).collect();
        for line in complete.split(|&b| b == b'\n') {
            if let Ok(event) = serde_json::from_slice::<Value>(line) {
                self.fold(&event);
            }
        }
        true
    }

    fn fold(&mut self, event: &Value) {
        let number = |key: &str| event[key].as_u64().unwrap_or(0);
        let id = number("bar");
        match event["event"].as_str() {
            Some("start") => {
                self.bars.insert(
                    id,
                    Bar {
                        label: event["label"].as_str().unwrap_or_default().to_string(),
                        unit: event["unit"].as_str().unwrap_or_default().to_string(),
                        len: event["len"].as_u64(),
                        ..Bar::default()
                    },
                );
            }
            Some("tick") => {
                if let Some(bar) = self.bars.get_mut(&id).filter(|b| !b.done) {
                    bar.pos = number("pos");
                    bar.calls = number("calls");
                    bar.input_tokens = number("input_tokens");
                    bar.output_tokens = number("output_tokens");
                    bar.fallbacks = number("fallbacks");
                }
            }
            Some("end") => {
                if let Some(bar) = self.bars.get_mut(&id) {
                    bar.pos = number("pos");
                    bar.done = true;
                }
            }
            Some("run_dir") => {
                if let Some(path) = event["path"].as_str() {
                    if !self.run_dirs.iter().any(|p| p == path) {
                        self.run_dirs.push(path.to_string());
                    }
                }
            }
            _ => {}
        }
    }

    /// The bars as the page draws them.
    fn snapshot(&self) -> Value {
        let bars: Vec<Value> = self
            .bars
            .values()
            .map(|b| {
                json!({
                    "label": b.label, "unit": b.unit, "pos": b.pos, "len": b.len,
                    "calls": b.calls, "input_tokens": b.input_tokens,
                    "output_tokens": b.output_tokens, "fallbacks": b.fallbacks, "done": b.done,
                })
            })
            .collect();
        json!({ "bars": bars })
    }
}

/// Up to [`READ_STEP`] bytes of `path` from `offset`.
fn read_from(path: &Path, offset: u64) -> Option<Vec<u8>> {
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut bytes = Vec::new();
    file.take(READ_STEP as u64).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

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

    #[test]
    fn a_progress_file_folds_into_each_bars_last_counts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress.jsonl");
        let lines = [
            r#"{"event":"run_dir","path":"/r/a"}"#,
            r#"{"event":"start","bar":1,"label":"x cases","unit":"cases","len":4}"#,
            r#"{"event":"tick","bar":1,"pos":2,"calls":5,"input_tokens":10,"output_tokens":3,"fallbacks":1}"#,
            r#"{"event":"end","bar":1,"pos":4}"#,
            r#"{"event":"tick","bar":1,"pos":3,"calls":9}"#,
            r#"{"event":"start","bar":2,"label":"y","unit":"dialogs","len":null}"#,
            r#"{"event":"tick","bar":2,"pos":1"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let progress = Progress::read(&path);
        assert_eq!(progress.run_dirs, ["/r/a"]);
        let snapshot = progress.snapshot();
        let bars = snapshot["bars"].as_array().unwrap();
        assert_eq!(bars.len(), 2);
        // The tick after the end is ignored; the cut-off last line is not read yet.
        assert_eq!(bars[0]["pos"], 4);
        assert_eq!(bars[0]["calls"], 5);
        assert_eq!(bars[0]["done"], true);
        assert_eq!(bars[1]["len"], Value::Null);
        assert_eq!(bars[1]["pos"], 0);
    }
}
