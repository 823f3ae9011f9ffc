//! Scale-out behind an existing load balancer: three memorybench-mcp servers, each with its own
//! store, behind Debian's nginx hashing the bearer token consistently (`docs/service.md`,
//! "Beyond one machine"). Checks that each tenant's calls always land on one shard; that when
//! a shard is killed (`kill -9`) its tenants get errors while the others carry on, and after
//! its restart find everything that was acknowledged; and that adding a fourth shard moves only
//! tenants to the new shard, about a quarter of them.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::http::{message, HttpClient};
use serde_json::{json, Value};

const TENANTS: usize = 96;

fn token(tenant: usize) -> String {
    format!("token-t{tenant:02}")
}

fn nginx() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn config(dir: &Path) -> PathBuf {
    let mut text = String::new();
    for tenant in 0..TENANTS {
        text.push_str(&format!(
            "[[tenants]]\nname = \"t{tenant:02}\"\ntoken_sha256 = \"{}\"\n\n",
            memorybench_mcp::digest_hex(&token(tenant))
        ));
    }
    let path = dir.join("service.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// One shard: its server process, store and port.
struct Shard {
    child: Child,
    store: PathBuf,
    port: u16,
}

impl Shard {
    /// A server on `store` at loopback `port` (0: a free one).
    fn start(store: PathBuf, config: &Path, port: u16) -> Shard {
        let mut child = Command::new(env!("CARGO_BIN_EXE_memorybench-mcp"))
            .arg("--store")
            .arg(&store)
            .args(["--memory-system", "bm25_message", "--config"])
            .arg(config)
            .args(["--http", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut lines = stderr.lines().map_while(Result::ok);
        let port = lines
            .by_ref()
            .find_map(|line| {
                let url = line
                    .split("listening on http://127.0.0.1:")
                    .nth(1)?
                    .to_string();
                url.trim_end_matches("/mcp").parse().ok()
            })
            .expect("the shard listens");
        // Keep reading what the server logs, so its writes never fail.
        std::thread::spawn(move || lines.for_each(drop));
        Shard { child, store, port }
    }

    fn kill_9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Shard {
    fn drop(&mut self) {
        self.kill_9();
    }
}

/// nginx in the foreground with one upstream per shard, hashing `Authorization`
/// consistently, never retrying another shard, and naming the shard that answered.
struct Balancer {
    child: Child,
    url: String,
}

impl Balancer {
    fn start(nginx: &Path, dir: &Path, shards: &[&Shard]) -> Balancer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let servers: String = shards
            .iter()
            .map(|s| format!("    server 127.0.0.1:{} max_fails=0;\n", s.port))
            .collect();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {dir}/nginx.pid;\n\
             error_log {dir}/error.log;\nevents {{ worker_connections 512; }}\nhttp {{\n\
             access_log off;\nclient_body_temp_path {dir}/body;\nproxy_temp_path {dir}/proxy;\n\
             upstream shards {{\n    hash $http_authorization consistent;\n{servers}}}\n\
             server {{\n  listen 127.0.0.1:{port};\n  location / {{\n\
             proxy_pass http://shards;\n    proxy_http_version 1.1;\n\
             proxy_set_header Host 127.0.0.1;\n    proxy_buffering off;\n\
             proxy_next_upstream off;\n    add_header X-Shard $upstream_addr always;\n  }}\n}}\n}}\n",
            dir = dir.display()
        );
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let child = Command::new(nginx)
            .args(["-p", dir.to_str().unwrap(), "-c", path.to_str().unwrap()])
            .args(["-e", dir.join("error.log").to_str().unwrap()])
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "nginx did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Balancer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tool call through the balancer: (HTTP status, the shard's port, the tool result).
fn call(client: &HttpClient, id: u64, tool: &str, arguments: Value) -> (u16, u16, Value) {
    let response = client.post(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}}));
    let status = response.status().as_u16();
    let shard = response
        .headers()
        .get("x-shard")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let body = response.text().unwrap_or_default();
    (status, shard, message(&body)["result"].clone())
}

/// A session of `tenant` through the balancer, or `None` when its shard does not answer.
fn session(url: &str, tenant: usize) -> Option<HttpClient> {
    let mut client = HttpClient::new(url, Some(&token(tenant)));
    (client.initialize() == 200).then_some(client)
}

/// Each tenant's shard, from one add and one search through the balancer (both must land on
/// the same shard); tenants whose shard is down are left out.
fn shards_of_tenants(url: &str, marker: &str) -> HashMap<usize, u16> {
    let mut placed = HashMap::new();
    for tenant in 0..TENANTS {
        let Some(client) = session(url, tenant) else {
            continue;
        };
        let text = format!("{marker} of tenant {tenant}");
        let (status, first, _) = call(
            &client,
            1,
            "add_memory",
            json!({"user_id": "u", "wait": true,
            "messages": [{"role": "user", "content": text}]}),
        );
        assert_eq!(status, 200, "tenant {tenant}");
        let (status, second, found) = call(
            &client,
            2,
            "search_memories",
            json!({"user_id": "u", "query": marker, "limit": 50}),
        );
        assert_eq!(status, 200);
        assert_eq!(first, second, "tenant {tenant} moved between two calls");
        assert!(
            found.to_string().contains(&text),
            "tenant {tenant}: {found}"
        );
        placed.insert(tenant, first);
    }
    placed
}

#[test]
fn tenants_stay_on_their_shard_through_a_crash_and_a_fourth_shard_moves_a_quarter() {
    let Some(nginx) = nginx() else {
        mb_core::test_data::skip(
            "nginx not installed (bash scripts/setup.sh installs nginx-light)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let mut shards: Vec<Shard> = (0..3)
        .map(|i| Shard::start(dir.path().join(format!("store-{i}")), &config, 0))
        .collect();
    let lb_dir = dir.path().join("nginx-3");
    std::fs::create_dir_all(&lb_dir).unwrap();
    let balancer = Balancer::start(&nginx, &lb_dir, &shards.iter().collect::<Vec<_>>());

    // Every tenant lands on one shard, call after call; every shard gets tenants.
    let before = shards_of_tenants(&balancer.url, "first marker");
    assert_eq!(before.len(), TENANTS);
    let used: HashSet<u16> = before.values().copied().collect();
    assert_eq!(used.len(), 3, "{before:?}");
    assert_eq!(before, shards_of_tenants(&balancer.url, "second marker"));

    // kill -9 one shard: its tenants get errors, the others carry on.
    let victim_port = shards[0].port;
    let victims: Vec<usize> = before
        .iter()
        .filter(|(_, port)| **port == victim_port)
        .map(|(tenant, _)| *tenant)
        .collect();
    shards[0].kill_9();
    for tenant in 0..TENANTS {
        let up = session(&balancer.url, tenant).is_some();
        assert_eq!(up, !victims.contains(&tenant), "tenant {tenant}");
    }
    // Restarted on its store and port: its tenants find what was acknowledged before.
    let store = shards[0].store.clone();
    shards[0] = Shard::start(store, &config, victim_port);
    for tenant in &victims {
        let client = session(&balancer.url, *tenant).unwrap();
        let (status, shard, found) = call(
            &client,
            1,
            "search_memories",
            json!({"user_id": "u", "query": "marker", "limit": 50}),
        );
        assert_eq!((status, shard), (200, victim_port));
        let text = found.to_string();
        assert!(
            text.contains(&format!("first marker of tenant {tenant}")),
            "{text}"
        );
        assert!(
            text.contains(&format!("second marker of tenant {tenant}")),
            "{text}"
        );
    }
    drop(balancer);

    // A fourth shard: tenants that move go to it, about a quarter of them.
    shards.push(Shard::start(dir.path().join("store-3"), &config, 0));
    let lb_dir = dir.path().join("nginx-4");
    std::fs::create_dir_all(&lb_dir).unwrap();
    let balancer = Balancer::start(&nginx, &lb_dir, &shards.iter().collect::<Vec<_>>());
    let after = shards_of_tenants(&balancer.url, "third marker");
    let new_port = shards[3].port;
    let moved: Vec<usize> = (0..TENANTS).filter(|t| after[t] != before[t]).collect();
    for tenant in &moved {
        assert_eq!(
            after[tenant], new_port,
            "tenant {tenant} moved between old shards"
        );
    }
    let share = moved.len() as f64 / TENANTS as f64;
    eprintln!(
        "a fourth shard moved {} of {TENANTS} tenants ({share:.2})",
        moved.len()
    );
    assert!((0.10..=0.45).contains(&share), "{share}");
}
