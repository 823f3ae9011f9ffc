//! The append-only log that makes runs resumable: each finished case is one JSON line, written
//! as it finishes; a run started again reads the cases it holds and does the others.

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::hash::Hash;
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{file_error, HarnessError};

/// A case a log holds: what identifies it, and whether it must be done again.
pub trait LogEntry: Serialize + DeserializeOwned {
    /// What identifies the case within its run.
    type Key: Eq + Hash;

    /// The case's key.
    fn key(&self) -> Self::Key;

    /// Whether the case got no answer (it is done again when the run resumes).
    fn gave_up(&self) -> bool;
}

/// An append-only log of finished cases, knowing which it held when opened.
pub struct PartialLog<E: LogEntry> {
    path: PathBuf,
    file: std::fs::File,
    held: HashSet<E::Key>,
    entries: PhantomData<E>,
}

impl<E: LogEntry> PartialLog<E> {
    /// Opens (or creates) the log at `path`, with the cases it holds already: those of an
    /// interrupted run, except the ones that gave up, which are done again. A last line a
    /// crash cut short (no newline) is cut off the file; any other line that does not read is
    /// an error naming the file and line, never a case silently dropped.
    pub fn open(path: &Path) -> Result<(PartialLog<E>, Vec<E>), HarnessError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| file_error(parent, e))?;
        }
        let text = match std::fs::read(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(file_error(path, e)),
        };
        // Everything up to the last newline was written whole; what follows was torn.
        let whole = text
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let mut finished = Vec::new();
        for (number, line) in text[..whole].split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let entry: E = serde_json::from_slice(line).map_err(|e| {
                HarnessError::Usage(format!(
                    "{} line {}: not a finished case ({e}); move the file away to answer its cases again",
                    path.display(),
                    number + 1
                ))
            })?;
            if !entry.gave_up() {
                finished.push(entry);
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| file_error(path, e))?;
        if whole < text.len() {
            file.set_len(whole as u64)
                .map_err(|e| file_error(path, e))?;
        }
        let held = finished.iter().map(LogEntry::key).collect();
        let log = PartialLog {
            path: path.to_path_buf(),
            file,
            held,
            entries: PhantomData,
        };
        Ok((log, finished))
    }

    /// Whether the log held the case `key` when opened.
    pub fn holds(&self, key: &E::Key) -> bool {
        self.held.contains(key)
    }

    /// Appends one case.
    pub fn append(&mut self, entry: &E) -> Result<(), HarnessError> {
        let line = serde_json::to_string(entry).map_err(|e| HarnessError::Usage(e.to_string()))?;
        writeln!(self.file, "{line}").map_err(|e| file_error(&self.path, e))
    }

    /// Forces the log to disk.
    pub fn sync(&self) -> Result<(), HarnessError> {
        self.file.sync_data().map_err(|e| file_error(&self.path, e))
    }
}
