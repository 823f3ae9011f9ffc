//! The Python host process a memory system written in Python runs in: started with the host
//! script (`py/memorybench/host.py`, compiled in), spoken to in JSON lines.
//!
//! One request is in flight per caller; the host serves them one at a time, in the order
//! written. While it serves one it may call back for a model answer or embeddings: a reader
//! thread hands each line to the request it belongs to (a reply by its `id`, a call by its
//! `parent`), and the request's future answers the call itself, so the model work is charged
//! to the case or dialog that caused it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::error::MemoryError;

/// The host script, run with `python -c`.
const HOST_SCRIPT: &str = include_str!("../../../py/memorybench/host.py");

/// The longest protocol line read from the host (a reply with its retrieved memories).
const MAX_LINE_BYTES: usize = 64 << 20;

/// What the reader thread hands a request: the host's call for a model, or the reply.
#[derive(Debug)]
pub enum Incoming {
    /// A model or embedding call made while serving the request.
    Call(Map<String, Value>),
    /// The request's reply.
    Reply(Map<String, Value>),
    /// The host is gone (exited, or wrote something that is not the protocol).
    Gone(String),
}

/// Requests waiting for their reply, by id.
type Waiting = Arc<Mutex<HashMap<u64, UnboundedSender<Incoming>>>>;

/// A running host.
pub struct Host {
    child: Mutex<Child>,
    stdin: Arc<Mutex<ChildStdin>>,
    waiting: Waiting,
    next_id: AtomicU64,
    /// Why the host stopped, once it has.
    gone: Arc<Mutex<Option<String>>>,
    /// The system, for errors.
    pub target: String,
}

/// How to start a host.
pub struct Launch<'a> {
    /// The interpreter.
    pub interpreter: &'a str,
    /// Folders put first on the import path.
    pub path: &'a [PathBuf],
    /// `module.path:ClassName`.
    pub target: &'a str,
}

impl Host {
    /// Starts the host, waits for its greeting and opens the system with `open` (the
    /// request's fields); returns the host and the opening's result. The system cannot call
    /// models while it is being built.
    pub fn start(
        launch: &Launch<'_>,
        open: Value,
    ) -> Result<(Host, Map<String, Value>), MemoryError> {
        let target = launch.target.to_string();
        let failed = |why: String| MemoryError::Config(format!("python system {target}: {why}"));
        let mut command = Command::new(launch.interpreter);
        command
            .arg("-c")
            .arg(HOST_SCRIPT)
            .arg(launch.target)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .env("PYTHONHASHSEED", "0")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONUNBUFFERED", "1");
        if !launch.path.is_empty() {
            let mut paths: Vec<PathBuf> = launch.path.to_vec();
            if let Some(existing) = std::env::var_os("PYTHONPATH") {
                paths.extend(std::env::split_paths(&existing));
            }
            let joined = std::env::join_paths(paths)
                .map_err(|e| failed(format!("its path cannot be joined: {e}")))?;
            command.env("PYTHONPATH", joined);
        }
        let mut child = command.spawn().map_err(|e| {
            failed(format!(
                "cannot start {} ({e}); set `interpreter` in its --memory-config file",
                launch.interpreter
            ))
        })?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(failed("its pipes are missing".into()));
        };
        let mut reader = BufReader::new(stdout);
        let greeting =
            read_line(&mut reader).map_err(|e| failed(format!("it did not start: {e}")))?;
        if greeting.get("hello").and_then(Value::as_u64) != Some(1) {
            return Err(failed(format!(
                "it greeted with {greeting:?}, not protocol 1"
            )));
        }
        let mut opening = match open {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        opening.insert("id".into(), json!(0));
        opening.insert("op".into(), json!("open"));
        writeln!(stdin, "{}", Value::Object(opening))
            .and_then(|()| stdin.flush())
            .map_err(|e| failed(format!("cannot write to it: {e}")))?;
        let opened = loop {
            let message =
                read_line(&mut reader).map_err(|e| failed(format!("it did not open: {e}")))?;
            if let Some(call) = message.get("call") {
                let refusal = json!({"call": call, "ok": false,
                    "error": {"message": "models cannot be called while the system is built"}});
                writeln!(stdin, "{refusal}")
                    .and_then(|()| stdin.flush())
                    .map_err(|e| failed(format!("cannot write to it: {e}")))?;
                continue;
            }
            break message;
        };
        let result =
            reply_result(&opened).map_err(|e| failed(format!("opening it failed: {e}")))?;
        let waiting: Waiting = Arc::default();
        let gone: Arc<Mutex<Option<String>>> = Arc::default();
        let stdin = Arc::new(Mutex::new(stdin));
        spawn_reader(
            reader,
            Arc::clone(&stdin),
            Arc::clone(&waiting),
            Arc::clone(&gone),
            target.clone(),
        );
        let host = Host {
            child: Mutex::new(child),
            stdin,
            waiting,
            next_id: AtomicU64::new(1),
            gone,
            target,
        };
        Ok((host, result))
    }

    /// Sends request `op` with `fields`; its calls and reply arrive on the receiver.
    pub fn send(
        &self,
        op: &str,
        fields: Value,
    ) -> Result<(u64, UnboundedReceiver<Incoming>), MemoryError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = unbounded_channel();
        self.waiting
            .lock()
            .map_err(|_| self.broken("its request table is poisoned"))?
            .insert(id, sender);
        let mut request = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        request.insert("id".into(), json!(id));
        request.insert("op".into(), json!(op));
        self.write(&Value::Object(request))?;
        Ok((id, receiver))
    }

    /// Sends request `op` and forgets its reply (a failure is logged when it arrives); the
    /// host serves requests in order, so every later request sees its effect.
    pub fn send_and_forget(&self, op: &str, fields: Value) -> Result<(), MemoryError> {
        let (id, receiver) = self.send(op, fields)?;
        drop(receiver);
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.remove(&id);
        }
        Ok(())
    }

    /// Writes one protocol line (a request, or the answer to a call).
    pub fn write(&self, message: &Value) -> Result<(), MemoryError> {
        if let Some(why) = self.gone.lock().ok().and_then(|g| g.clone()) {
            return Err(self.broken(&why));
        }
        let mut stdin = self
            .stdin
            .lock()
            .map_err(|_| self.broken("its input is poisoned"))?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| self.broken(&format!("cannot write to it: {e}")))
    }

    /// An error saying the host cannot be used, and why.
    pub fn broken(&self, why: &str) -> MemoryError {
        MemoryError::Config(format!("python system {}: {why}", self.target))
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.write(&json!({"id": 0, "op": "close"}));
        if let Ok(mut child) = self.child.lock() {
            // The host exits once its input closes; give it a moment, then make sure.
            for _ in 0..50 {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn read_line<R: BufRead>(reader: &mut R) -> Result<Map<String, Value>, String> {
    let mut line = String::new();
    let read = <&mut R as std::io::Read>::take(reader, MAX_LINE_BYTES as u64)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    if read == 0 {
        return Err("it exited (its error is above, on stderr)".into());
    }
    if !line.ends_with('\n') && line.len() >= MAX_LINE_BYTES {
        return Err(format!("it wrote a line over {MAX_LINE_BYTES} bytes"));
    }
    match serde_json::from_str(&line) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(format!(
            "it wrote {:?}, which is not a protocol line",
            truncate(&line)
        )),
    }
}

fn truncate(text: &str) -> &str {
    let end = text.char_indices().nth(200).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

/// Reads the host's lines until it stops, handing each to the request it belongs to.
fn spawn_reader(
    mut reader: BufReader<std::process::ChildStdout>,
    stdin: Arc<Mutex<ChildStdin>>,
    waiting: Waiting,
    gone: Arc<Mutex<Option<String>>>,
    target: String,
) {
    std::thread::spawn(move || loop {
        let message = match read_line(&mut reader) {
            Ok(message) => message,
            Err(why) => {
                if let Ok(mut gone) = gone.lock() {
                    *gone = Some(why.clone());
                }
                if let Ok(mut waiting) = waiting.lock() {
                    for (_, sender) in waiting.drain() {
                        let _ = sender.send(Incoming::Gone(why.clone()));
                    }
                }
                return;
            }
        };
        let (key, incoming) = match message.get("call") {
            Some(_) => (
                message.get("parent").and_then(Value::as_u64),
                Incoming::Call(message),
            ),
            None => (
                message.get("id").and_then(Value::as_u64),
                Incoming::Reply(message),
            ),
        };
        let Some(key) = key else { continue };
        let Ok(mut table) = waiting.lock() else {
            return;
        };
        let is_reply = matches!(incoming, Incoming::Reply(_));
        let undelivered = match table.get(&key) {
            Some(sender) => sender.send(incoming).err().map(|e| e.0),
            None => Some(incoming),
        };
        if is_reply {
            table.remove(&key);
        }
        drop(table);
        if let Some(incoming) = undelivered {
            match &incoming {
                Incoming::Reply(reply) if reply.get("ok") != Some(&Value::Bool(true)) => {
                    tracing::warn!(
                        "python system {target}: a request failed: {:?}",
                        reply.get("error")
                    );
                }
                // A call made while serving a request no one waits for (a deletion) is
                // refused, so the host does not wait for it forever.
                Incoming::Call(call) => {
                    let refusal = json!({"call": call.get("call"), "ok": false,
                        "error": {"message": "models cannot be called during this operation"}});
                    if let Ok(mut stdin) = stdin.lock() {
                        let _ = writeln!(stdin, "{refusal}").and_then(|()| stdin.flush());
                    }
                }
                _ => {}
            }
        }
    });
}

/// The kind of failure a request has when a model call the harness served made it fail.
pub const MODEL_FAILURE: &str = "model";

/// Why the host says a request failed: the kind (`model`, or the Python exception's class) and
/// the start of its message.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFailure {
    /// `model` ([`MODEL_FAILURE`]) or the Python exception's class.
    pub kind: String,
    /// The exception's message, cut to a short excerpt.
    pub message: String,
}

impl std::fmt::Display for HostFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

/// A reply's `result`, or why it failed.
pub fn reply_result(reply: &Map<String, Value>) -> Result<Map<String, Value>, HostFailure> {
    if reply.get("ok") == Some(&Value::Bool(true)) {
        return Ok(match reply.get("result") {
            Some(Value::Object(result)) => result.clone(),
            _ => Map::new(),
        });
    }
    let error = &reply["error"];
    Err(HostFailure {
        kind: truncate(error["kind"].as_str().unwrap_or("error")).to_string(),
        message: truncate(error["message"].as_str().unwrap_or("no message")).to_string(),
    })
}
