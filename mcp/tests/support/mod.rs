//! A minimal MCP client over stdio for the tests: JSON-RPC lines to a child's standard input,
//! responses read from its standard output.

#![allow(dead_code)]

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

    /// Our server on `store`, with extra arguments.
    pub fn ours(store: &Path, extra: &[&str]) -> StdioClient {
        let mut command = Command::new(env!("CARGO_BIN_EXE_memorybench-mcp"));
        command
            .arg("--store")
            .arg(store)
            .args(["--memory-system", "bm25_message"])
            .args(extra);
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
