//! The servers under load: how each is started, stopped with SIGKILL, and asked afterwards
//! which entities it kept.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::client::{Error, Session, StdioSession};

/// The peak resident memory of process `pid` in MiB (`VmHWM` of `/proc/PID/status`; `None`
/// where there is no such file).
pub fn peak_rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The graph bounds our server runs with (`--max-entities`, `--max-graph-bytes`): far above what
/// 32 clients create in the longest run here, so a bound never turns a `create_entities` into a
/// refusal (at the default 100 000 entities a quiet 60 s run reached it after half a minute).
/// The reference has none.
const OURS_BOUNDS: [&str; 4] = ["--max-entities", "5000000", "--max-graph-bytes", "16GiB"];

/// Entities per `read_graph` page when our server's graph is read back (the whole graph of a
/// long run is over the reply bound; the reference has no pages and answers whole).
const PAGE: u32 = 1000;

/// A server the benchmark drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// memorybench-mcp over Streamable HTTP, one session per client.
    OursHttp,
    /// memorybench-mcp over stdio, one session shared by every client.
    OursStdio,
    /// `@modelcontextprotocol/server-memory` (stdio only), one session shared.
    Reference,
}

impl Server {
    /// The server a `--servers` name means.
    pub fn parse(name: &str) -> Result<Server, Error> {
        match name {
            "ours-http" => Ok(Server::OursHttp),
            "ours-stdio" => Ok(Server::OursStdio),
            "reference" => Ok(Server::Reference),
            other => Err(format!(
                "unknown server {other:?}: ours-http, ours-stdio or reference"
            )),
        }
    }

    /// The name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Server::OursHttp => "ours-http",
            Server::OursStdio => "ours-stdio",
            Server::Reference => "reference",
        }
    }
}

/// Where the programs are: the release build and the Node packages of `scripts/setup.sh`.
pub struct Programs {
    ours: PathBuf,
    node: PathBuf,
    reference: PathBuf,
}

impl Programs {
    /// The programs of the checkout at `root`; an error names what is missing and how to get it.
    pub fn find(root: &Path) -> Result<Programs, Error> {
        let modules = root.join("mcp/tests/node/node_modules");
        let programs = Programs {
            ours: root.join("target/release/memorybench-mcp"),
            node: modules.join(".bin/node"),
            reference: modules.join("@modelcontextprotocol/server-memory/dist/index.js"),
        };
        if !programs.ours.exists() {
            return Err(format!(
                "{} not found: cargo build --release -p memorybench-mcp",
                programs.ours.display()
            ));
        }
        Ok(programs)
    }

    /// Whether the reference server is installed (`bash scripts/setup.sh`).
    pub fn check_reference(&self) -> Result<(), Error> {
        match self.reference.exists() && self.node.exists() {
            true => Ok(()),
            false => Err(format!(
                "{} not found: bash scripts/setup.sh",
                self.reference.display()
            )),
        }
    }

    /// A stdio process of `server` (the reference, or ours for both of ours) on the files in
    /// `work`.
    fn stdio(&self, server: Server, work: &Path) -> Result<Child, Error> {
        let mut command = match server {
            Server::Reference => {
                let mut c = Command::new(&self.node);
                c.arg(&self.reference)
                    .env("MEMORY_FILE_PATH", work.join("memory.jsonl"));
                c
            }
            Server::OursHttp | Server::OursStdio => {
                let mut c = Command::new(&self.ours);
                c.arg("--store").arg(work.join("store"));
                c.args(OURS_BOUNDS);
                c
            }
        };
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", server.name()))
    }

    /// Starts `server` on the files in `work` and opens `clients` sessions (one shared, or
    /// one each over HTTP).
    pub async fn start(
        &self,
        server: Server,
        work: &Path,
        clients: usize,
    ) -> Result<(Child, Vec<Session>), Error> {
        if server != Server::OursHttp {
            let mut child = self.stdio(server, work)?;
            let shared = StdioSession::open(&mut child).await?;
            let sessions = (0..clients)
                .map(|_| Session::Stdio(shared.clone()))
                .collect();
            return Ok((child, sessions));
        }
        // The tokenless local tenant, allowed as many requests in flight as there are clients.
        let config = work.join("service.toml");
        std::fs::write(&config, format!("local_max_concurrent = {clients}\n"))
            .map_err(|e| format!("{}: {e}", config.display()))?;
        let mut child = Command::new(&self.ours)
            .arg("--store")
            .arg(work.join("store"))
            .args(OURS_BOUNDS)
            .args(["--http", "127.0.0.1:0", "--config"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start memorybench-mcp --http: {e}"))?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    if let Some(at) = line.split("listening on ").nth(1) {
                        break at.trim().to_string();
                    }
                }
                _ => return Err("memorybench-mcp --http printed no address".into()),
            }
        };
        // Keep reading its log so that the pipe never fills.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(clients)
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        let mut sessions = Vec::with_capacity(clients);
        for _ in 0..clients {
            let session = crate::client::HttpSession::open(http.clone(), &url).await?;
            sessions.push(Session::Http(session));
        }
        Ok((child, sessions))
    }

    /// The entity names `server` has on the files in `work`, read by a fresh process (ours in
    /// pages).
    pub async fn kept_names(&self, server: Server, work: &Path) -> Result<Vec<String>, Error> {
        let mut child = self.stdio(server, work)?;
        let session = Session::Stdio(StdioSession::open(&mut child).await?);
        let mut arguments = match server {
            Server::Reference => json!({}),
            Server::OursHttp | Server::OursStdio => json!({ "limit": PAGE }),
        };
        let mut names = Vec::new();
        loop {
            let reply = session.call("read_graph", arguments.clone()).await?;
            let graph = match reply.result.get("structuredContent") {
                Some(graph) => graph.clone(),
                None => reply.result["content"][0]["text"]
                    .as_str()
                    .and_then(|t| serde_json::from_str(t).ok())
                    .ok_or("read_graph answered neither structured content nor JSON text")?,
            };
            if let Some(entities) = graph["entities"].as_array() {
                names.extend(
                    entities
                        .iter()
                        .filter_map(|e| e["name"].as_str().map(str::to_string)),
                );
            }
            match graph.get("nextCursor") {
                Some(cursor) => arguments["cursor"] = cursor.clone(),
                None => break,
            }
        }
        stop(child).await;
        Ok(names)
    }
}

/// Stops a server with SIGKILL (what it acknowledged must survive) and waits for it.
pub async fn stop(mut child: Child) {
    let _ = child.start_kill();
    let _ = child.wait().await;
}
