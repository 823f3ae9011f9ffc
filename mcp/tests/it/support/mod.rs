//! A minimal MCP client over stdio for the tests: JSON-RPC lines to a child's standard input,
//! responses read from its standard output; and one over Streamable HTTP ([`http`]).

pub mod http;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

/// A running MCP server process.
pub struct StdioClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl StdioClient {
    /// Starts `command` and runs the MCP handshake.
    pub fn start(mut command: Command) -> StdioClient {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut client = StdioClient {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "memorybench-mcp-tests", "version": "0"}
            }),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        client.notify("notifications/initialized", json!({}));
        client
    }

    /// Our server on `store`, with the BM25 memory system and extra arguments.
    pub fn ours(store: &Path, extra: &[&str]) -> StdioClient {
        let mut args = vec!["--memory-system", "bm25_message"];
        args.extend_from_slice(extra);
        StdioClient::on_store(store, &args)
    }

    /// Our server on `store` with `args` as given (the default memory system unless they name
    /// one).
    pub fn on_store(store: &Path, args: &[&str]) -> StdioClient {
        let mut command = Command::new(env!("CARGO_BIN_EXE_memorybench-mcp"));
        command.arg("--store").arg(store).args(args);
        StdioClient::start(command)
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its response (skipping notifications in between).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(
                read > 0,
                "the server closed its output waiting for {method}"
            );
            let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("not JSON from the server ({e}): {line}");
            });
            if value.get("id") == Some(&json!(id)) {
                return value;
            }
        }
    }

    /// Calls a tool; returns the `result` (a tool result), panicking on a protocol error.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{tool}: protocol error {response}"),
        }
    }

    /// Kills the server with SIGKILL (no chance to flush or finish anything) and reaps it.
    pub fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Sends SIGTERM and waits for the server to exit; returns whether it exited cleanly.
    pub fn terminate(&mut self) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        self.child.wait().unwrap().success()
    }

    /// The tool list.
    pub fn tools(&mut self) -> Vec<Value> {
        let response = self.request("tools/list", json!({}));
        response["result"]["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first text content of a tool result.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// Whether a tool result is an error.
pub fn is_error(result: &Value) -> bool {
    result.get("isError") == Some(&json!(true))
}

/// The structured content of a tool result that must not be an error.
pub fn structured(result: &Value) -> Value {
    assert!(!is_error(result), "tool error: {result}");
    result["structuredContent"].clone()
}

/// `mcp/tests/node`, where `npm ci` installs the test tools.
pub fn node_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node")
}

/// The Node.js to run the npm tools with: the one `npm ci` installed in `mcp/tests/node`
/// (Node 22, which the conformance suite needs), else the system's `node`; `None` when neither
/// runs.
pub fn node() -> Option<std::path::PathBuf> {
    let local = node_dir().join("node_modules/node/bin/node");
    [local, std::path::PathBuf::from("node")]
        .into_iter()
        .find(|candidate| {
            Command::new(candidate)
                .arg("--version")
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        })
}

/// An npm package's file under `mcp/tests/node/node_modules`, when installed.
pub fn npm_file(relative: &str) -> Option<std::path::PathBuf> {
    let path = node_dir().join("node_modules").join(relative);
    path.exists().then_some(path)
}

/// Our server on Streamable HTTP at a free loopback port; returns it with its URL.
pub fn ours_http(store: &Path) -> (Child, String) {
    ours_http_with(store, &[])
}

/// Our server on Streamable HTTP with extra arguments; returns it with its URL.
pub fn ours_http_with(store: &Path, extra: &[&str]) -> (Child, String) {
    ours_http_system(store, "bm25_message", extra)
}

/// Our server on Streamable HTTP with memory system `system` and extra arguments; returns it
/// with its URL.
pub fn ours_http_system(store: &Path, system: &str, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memorybench-mcp"))
        .arg("--store")
        .arg(store)
        .args(["--memory-system", system, "--http", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("server starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        if let Some(url) = line.split("listening on ").nth(1) {
            let url = url.trim().to_string();
            // Keep reading (and showing) what the server logs, so its writes never fail.
            std::thread::spawn(move || {
                for line in stderr.lines().map_while(Result::ok) {
                    eprintln!("server: {line}");
                }
            });
            return (child, url);
        }
        line.clear();
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the HTTP server exited without listening");
}
