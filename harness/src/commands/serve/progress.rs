//! A launched job's progress file (`--progress-file`, JSON lines) folded as far as it has
//! been read: each bar's last counts, and the run directories the job announced. The job table
//! reads it whole; an event stream advances it as the file grows.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{json, Value};

/// Most bytes read from a file per step.
const READ_STEP: usize = 1 << 20;

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
    pub fn advance(&mut self, path: &Path) -> bool {
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
    pub fn snapshot(&self) -> Value {
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
pub(crate) fn read_from(path: &Path, offset: u64) -> Option<Vec<u8>> {
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut bytes = Vec::new();
    file.take(READ_STEP as u64).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

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
