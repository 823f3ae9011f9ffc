//! `mb-harness serve`: a real server on a free loopback port, driven over HTTP as the page
//! drives it ([`api`]), attacked ([`security`]), and used through headless Chromium
//! ([`browser`], with a small WebDriver client in [`webdriver`]).

mod api;
mod browser;
mod security;
mod webdriver;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running `mb-harness serve` in a folder of its own (its working directory, holding
/// `runs/`).
pub(crate) struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The folder.
    pub dir: tempfile::TempDir,
    client: reqwest::blocking::Client,
}

impl Served {
    /// Starts the server in a new folder that `prepare` may fill first.
    pub fn start(prepare: impl FnOnce(&Path), args: &[&str], env: &[(&str, &str)]) -> Served {
        let dir = tempfile::tempdir().unwrap();
        prepare(dir.path());
        let mut child = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
            .args(["serve", "--runs", "runs", "--port", "0"])
            .args(args)
            .envs(env.iter().copied())
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let base = loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap() == 0 {
                panic!("serve ended before listening: {}", child.wait().unwrap());
            }
            if let Some(address) = line.trim().strip_prefix("mb-harness: serving ") {
                break address.trim_end_matches('/').to_string();
            }
        };
        // The rest of its output is drained, so the server never blocks writing it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        Served {
            child,
            base,
            dir,
            client,
        }
    }

    /// The folder's `runs/`.
    pub fn runs(&self) -> PathBuf {
        self.dir.path().join("runs")
    }

    /// GET `path`: the status and the JSON body (null when it is not JSON).
    pub fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(Value::Null))
    }

    /// The body of GET `path`, as text.
    pub fn text(&self, path: &str) -> String {
        self.client
            .get(format!("{}{path}", self.base))
            .send()
            .unwrap()
            .text()
            .unwrap()
    }

    /// POST `body` as JSON to `path`.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .json(body)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(Value::Null))
    }

    /// Launches `body`; the job's id.
    pub fn launch(&self, body: &Value) -> String {
        let (status, reply) = self.post("/api/jobs", body);
        assert_eq!(status, 201, "{reply}");
        reply["id"].as_str().unwrap().to_string()
    }

    /// Job `id` once it has ended.
    pub fn ended(&self, id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let (_, job) = self.get(&format!("/api/jobs/{id}"));
            if !matches!(job["state"].as_str(), Some("running" | "stopping")) {
                return job;
            }
            assert!(Instant::now() < deadline, "job {id} never ended: {job}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Job `id`'s output.
    pub fn job_log(&self, id: &str) -> String {
        std::fs::read_to_string(self.runs().join(".serve/jobs").join(id).join("output.log"))
            .unwrap_or_default()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` as a query value.
pub(crate) fn query(text: &str) -> String {
    let mut encoded = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// An offline off-policy launch of `system` on the sample's first `limit` rows.
pub(crate) fn offline_launch(system: &str, limit: u64) -> Value {
    serde_json::json!({
        "regime": "off-policy", "dataset_type": "domain", "set_name": "Sample",
        "baseline": system, "llm": "offline", "embedder": "hashing", "threads": 2, "limit": limit,
    })
}
