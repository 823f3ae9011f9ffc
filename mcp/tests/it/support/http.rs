//! A minimal MCP client over Streamable HTTP for the tests, with an optional bearer token.

use reqwest::blocking::{Client, Response};
use serde_json::{json, Value};

/// One MCP session over HTTP.
pub struct HttpClient {
    client: Client,
    url: String,
    token: Option<String>,
    session: Option<String>,
    next_id: u64,
}

/// The JSON-RPC message of a response body (plain JSON, or the first `data:` event of a
/// stream that carries an `id`).
pub fn message(body: &str) -> Value {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return value;
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or(Value::Null)
}

impl HttpClient {
    /// A client of `url` sending `token` (none: no Authorization header).
    pub fn new(url: &str, token: Option<&str>) -> HttpClient {
        HttpClient {
            client: Client::builder()
                .timeout(std::time::Duration::from_secs(120))
                .build()
                .unwrap(),
            url: url.to_string(),
            token: token.map(str::to_string),
            session: None,
            next_id: 1,
        }
    }

    /// Sends one JSON-RPC message; returns the raw response.
    pub fn post(&self, message: &Value) -> Response {
        let mut request = self
            .client
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .body(message.to_string());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = &self.session {
            request = request.header("Mcp-Session-Id", session);
        }
        request.send().unwrap()
    }

    /// Runs the handshake; returns the HTTP status of the initialize request.
    pub fn initialize(&mut self) -> u16 {
        let response = self.post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}}));
        let status = response.status().as_u16();
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().unwrap().to_string());
        }
        let _ = response.text();
        if status == 200 {
            let note = self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            let _ = note.text();
        }
        status
    }

    /// Uses another client's session id (to try to take it over).
    pub fn with_session(mut self, session: Option<String>) -> HttpClient {
        self.session = session;
        self
    }

    /// This client's session id.
    pub fn session(&self) -> Option<String> {
        self.session.clone()
    }

    /// Calls a tool; returns (HTTP status, the JSON-RPC message).
    pub fn call_raw(&mut self, tool: &str, arguments: Value) -> (u16, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let response = self.post(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        let status = response.status().as_u16();
        let body = response.text().unwrap();
        (
            status,
            if status == 200 {
                message(&body)
            } else {
                json!(body)
            },
        )
    }

    /// Calls a tool that must succeed at the HTTP level; returns its tool result.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let (status, message) = self.call_raw(tool, arguments);
        assert_eq!(status, 200, "{tool}: {message}");
        message["result"].clone()
    }
}
