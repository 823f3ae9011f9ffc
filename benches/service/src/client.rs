//! MCP clients that cost the server nothing they do not have to: JSON-RPC over a server's
//! stdio (one session that many callers share, requests matched to replies by id) and over
//! Streamable HTTP (one session per caller). Both speak only what the benchmark calls:
//! `initialize`, `notifications/initialized` and `tools/call`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::oneshot;

/// The protocol version the clients announce.
const PROTOCOL: &str = "2025-06-18";

/// A failure of the transport or the protocol (a tool's own error is [`Reply::is_error`]).
pub type Error = String;

/// What a `tools/call` answered.
pub struct Reply {
    /// The tool reported an error (`isError`).
    pub is_error: bool,
    /// The call's `result`.
    pub result: Value,
}

/// A session with a server: one stdio session shared by many callers, or one HTTP session.
pub enum Session {
    /// A server's standard input and output.
    Stdio(Arc<StdioSession>),
    /// A Streamable HTTP session.
    Http(HttpSession),
}

impl Session {
    /// Calls tool `name` with `arguments`.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<Reply, Error> {
        let params = json!({"name": name, "arguments": arguments});
        let result = match self {
            Session::Stdio(s) => s.request("tools/call", params).await?,
            Session::Http(s) => s.request("tools/call", params).await?,
        };
        Ok(Reply {
            is_error: result
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            result,
        })
    }
}

fn initialize_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "mb-service-bench", "version": "1"},
    })
}

/// The `result` of a JSON-RPC reply, or its error.
fn result_of(reply: Value) -> Result<Value, Error> {
    if let Some(error) = reply.get("error") {
        return Err(format!("JSON-RPC error: {error}"));
    }
    reply
        .get("result")
        .cloned()
        .ok_or_else(|| format!("a reply without result: {reply}"))
}

/// One stdio session: requests written as lines, replies routed to their caller by id.
pub struct StdioSession {
    stdin: tokio::sync::Mutex<ChildStdin>,
    waiting: Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>,
    next_id: AtomicU64,
}

impl StdioSession {
    /// Takes over `child`'s standard input and output and initializes the session.
    pub async fn open(child: &mut Child) -> Result<Arc<StdioSession>, Error> {
        let stdin = child.stdin.take().ok_or("the server has no stdin pipe")?;
        let stdout = child.stdout.take().ok_or("the server has no stdout pipe")?;
        let waiting: Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>> = Arc::default();
        let routes = waiting.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let Some(id) = message.get("id").and_then(Value::as_u64) else {
                    continue; // a notification or a request of the server's
                };
                let sender = routes.lock().ok().and_then(|mut w| w.remove(&id));
                if let Some(sender) = sender {
                    let _ = sender.send(message);
                }
            }
        });
        let session = Arc::new(StdioSession {
            stdin: tokio::sync::Mutex::new(stdin),
            waiting,
            next_id: AtomicU64::new(1),
        });
        session.request("initialize", initialize_params()).await?;
        session
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(session)
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        self.waiting
            .lock()
            .map_err(|_| "the reply table is poisoned")?
            .insert(id, sender);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let reply = receiver
            .await
            .map_err(|_| format!("the server closed its output before answering {method}"))?;
        result_of(reply)
    }

    async fn send(&self, message: &Value) -> Result<(), Error> {
        let mut line = message.to_string();
        line.push('\n');
        let mut stdin = self.stdin.lock().await;
        stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("writing to the server: {e}"))?;
        stdin
            .flush()
            .await
            .map_err(|e| format!("writing to the server: {e}"))
    }
}

/// One Streamable HTTP session.
pub struct HttpSession {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
    next_id: AtomicU64,
}

impl HttpSession {
    /// Opens and initializes a session at `url` (the server's `/mcp` endpoint).
    pub async fn open(http: reqwest::Client, url: &str) -> Result<HttpSession, Error> {
        let mut session = HttpSession {
            http,
            url: url.to_string(),
            session: None,
            next_id: AtomicU64::new(1),
        };
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": initialize_params()});
        let (reply, id) = session.post(&body).await?;
        session.session = id;
        result_of(reply.ok_or("initialize had no reply")?)?;
        session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(session)
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (reply, _) = self.post(&body).await?;
        result_of(reply.ok_or_else(|| format!("{method} had no reply"))?)
    }

    /// Posts one message; returns the JSON-RPC reply in the body (plain JSON or an event
    /// stream) and the session id the server gave.
    async fn post(&self, body: &Value) -> Result<(Option<Value>, Option<String>), Error> {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", PROTOCOL);
        }
        let response = request.send().await.map_err(|e| format!("HTTP: {e}"))?;
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let is_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = response.text().await.map_err(|e| format!("HTTP: {e}"))?;
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", text.trim()));
        }
        let reply = if is_stream {
            stream_reply(&text)
        } else if text.trim().is_empty() {
            None
        } else {
            Some(serde_json::from_str(&text).map_err(|e| format!("a reply not JSON: {e}"))?)
        };
        Ok((reply, session))
    }
}

/// The JSON-RPC reply among the events of a `text/event-stream` body.
fn stream_reply(text: &str) -> Option<Value> {
    text.split("\n\n").find_map(|event| {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim_start)
            .collect();
        let message: Value = serde_json::from_str(&data.join("\n")).ok()?;
        message.get("id").is_some().then_some(message)
    })
}
