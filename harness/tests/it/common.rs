//! Running the binary as a user does, and reading what it wrote.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::Value;

/// The content of the last message of `sent` (a prediction, or a chat request): the assembled
/// prompt; empty when there is none.
pub fn last_message(sent: &Value) -> &str {
    sent["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
}

/// `mb-harness ARGS`.
pub fn harness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(args)
        .output()
        .unwrap()
}

/// `ARGS` with the store and results under `dir` (`dir/store`, `dir/runs`).
pub fn in_dir(dir: &Path, args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    for (flag, sub) in [("--store", "store"), ("--output-dir", "runs")] {
        all.extend([flag.to_string(), dir.join(sub).display().to_string()]);
    }
    all
}

/// `mb-harness ARGS` with its store and results under `dir` (`dir/store`, `dir/runs`).
pub fn harness_in(dir: &Path, args: &[&str]) -> Output {
    let all = in_dir(dir, args);
    harness(&all.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Asserts that a command succeeded, showing what it printed on standard error if not.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The one run directory under `parent`.
pub fn only_run(parent: PathBuf) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1);
    dirs.pop().unwrap()
}

/// A JSON file's contents.
pub fn json(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// A local OpenAI-compatible server: `reply` turns each request's JSON body into the JSON
/// answered; returns its port. One thread per connection, each closed after its response
/// (tiny_http's thread pool can leave a request of a busy machine unread for minutes).
pub fn chat_server(reply: impl Fn(&Value) -> Value + Send + Sync + 'static) -> u16 {
    chat_server_with_status(move |sent| (200, reply(sent)))
}

/// As [`chat_server`], `reply` also choosing the HTTP status (a 400 for a prompt that
/// overflows the model's context, say).
pub fn chat_server_with_status(
    reply: impl Fn(&Value) -> (u16, Value) + Send + Sync + 'static,
) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let reply = Arc::new(reply);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let reply = reply.clone();
            std::thread::spawn(move || {
                let _ = answer(stream, reply.as_ref());
            });
        }
    });
    port
}

/// Reads one HTTP request from `stream` and answers it with `reply` of its body.
fn answer(mut stream: TcpStream, reply: &dyn Fn(&Value) -> (u16, Value)) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let sent: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (status, body) = reply(&sent);
    let text = body.to_string();
    let reason = if status == 200 { "OK" } else { "Error" };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{text}",
        text.len()
    )?;
    stream.flush()
}
