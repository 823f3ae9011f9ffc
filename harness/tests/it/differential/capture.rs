//! Capturing what each side sends: a recording stub model server (scripts/upstream/stub_llm.py)
//! per run, upstream's own Python run against one (scripts/upstream/run_upstream.py), and
//! `mb-harness` run against another.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The prompt of the harness's preflight check, which upstream does not send.
const PREFLIGHT: &str = "Reply with the word OK.";

/// The model name both sides send.
pub const MODEL: &str = "stub-model";

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// What both sides need, or why the differential cannot run here.
pub struct Sides {
    /// Upstream MemoryBench's checkout.
    pub upstream: PathBuf,
    /// The Python of the venv `scripts/upstream/venv.sh` builds.
    pub python: PathBuf,
}

impl Sides {
    /// The checkout (`MEMORYBENCH_UPSTREAM`, else `../shared/upstream/MemoryBench`) and the
    /// venv (`.cache/upstream-venv`), or the reason one is missing.
    pub fn find() -> Result<Sides, String> {
        let upstream = std::env::var_os("MEMORYBENCH_UPSTREAM")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join("../shared/upstream/MemoryBench"));
        if !upstream.join("src/off-policy.py").is_file() {
            return Err(format!(
                "no upstream MemoryBench checkout at {}",
                upstream.display()
            ));
        }
        let python = root().join(".cache/upstream-venv/bin/python");
        if !python.is_file() {
            return Err(format!(
                "{} is absent (bash scripts/setup.sh builds it)",
                python.display()
            ));
        }
        Ok(Sides { upstream, python })
    }
}

/// One request a side sent.
#[derive(Debug, Clone)]
pub struct Request {
    /// `chat` or `embeddings`.
    pub kind: &'static str,
    /// The JSON body.
    pub body: Value,
}

/// A stub server recording into `dir/<name>.jsonl`, stopped when dropped.
struct Stub {
    child: Child,
    port: u16,
    record: PathBuf,
}

impl Stub {
    fn start(dir: &Path, name: &str) -> Stub {
        let port_file = dir.join(format!("{name}.port"));
        let record = dir.join(format!("{name}.jsonl"));
        // Owned by the stub at once: dropping it (a panic included) stops the server.
        let mut stub = Stub {
            child: Command::new("python3")
                .arg(root().join("scripts/upstream/stub_llm.py"))
                .args(["--port", "0", "--model", MODEL, "--port-file"])
                .arg(&port_file)
                .arg("--record")
                .arg(&record)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
            port: 0,
            record,
        };
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(&port_file).unwrap_or_default();
            if let Ok(port) = text.trim().parse() {
                stub.port = port;
                return stub;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the stub server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every request recorded so far, in order; the harness's preflight left out.
    fn requests(&self) -> Vec<Request> {
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        text.lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter_map(|entry| {
                let path = entry["path"].as_str().unwrap_or_default();
                let kind = if path.ends_with("/chat/completions") {
                    "chat"
                } else if path.ends_with("/embeddings") {
                    "embeddings"
                } else {
                    return None;
                };
                let body = entry["body"].clone();
                let preflight = body["messages"]
                    .as_array()
                    .is_some_and(|m| m.len() == 1 && m[0]["content"] == PREFLIGHT);
                (!preflight).then_some(Request { kind, body })
            })
            .collect()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Which of upstream's runners a slice runs.
#[derive(Debug, Clone, Copy)]
pub enum Runner {
    /// `src/off-policy.py`, `mb-harness off-policy`.
    OffPolicy,
    /// `src/on-policy.py`, `mb-harness on-policy`: `step` steps of `batch` drawn rows.
    OnPolicy { step: u32, batch: u32 },
}

impl Runner {
    /// The flags both sides take for it (upstream's runner script, then our subcommand).
    fn flags(self) -> (Vec<String>, Vec<String>) {
        match self {
            Runner::OffPolicy => (vec![], vec!["off-policy".into()]),
            Runner::OnPolicy { step, batch } => {
                let sizes = vec![
                    "--step".to_string(),
                    step.to_string(),
                    "--batch-size".into(),
                    batch.to_string(),
                ];
                let mut upstream = vec!["--regime".to_string(), "on-policy".into()];
                upstream.extend(sizes.clone());
                let mut ours = vec!["on-policy".to_string()];
                ours.extend(sizes);
                (upstream, ours)
            }
        }
    }
}

/// One slice: a memory system on a set, the first `limit` rows of each split, through one of
/// upstream's runners.
pub struct Slice {
    /// Off-policy or on-policy.
    pub runner: Runner,
    /// Upstream's and our name of the memory system.
    pub system: &'static str,
    /// The set (a domain): `Sample`, both of the built-in sample's datasets.
    pub set_name: &'static str,
    /// Rows of each split (`None`: every row).
    pub limit: Option<u32>,
    /// The time every MemoryOS exchange is stamped with on both sides (upstream stamps the
    /// wall clock, so two runs agree only on a fixed one): `run_upstream.py --fixed-time`, and
    /// `timestamps` in our MemoryOS settings.
    pub fixed_time: Option<&'static str>,
    /// Our side runs upstream's own solver of this name (`bm25`, `embedder`) as a Python
    /// memory system (`--baseline py:upstream_solver:UpstreamSolver`), instead of our native
    /// system: the proof that the Python path carries a system over unchanged.
    pub python: Option<&'static str>,
}

impl Slice {
    /// `--limit N`, or nothing for every row.
    fn limit_flag(&self) -> Vec<String> {
        self.limit
            .map(|n| vec!["--limit".to_string(), n.to_string()])
            .unwrap_or_default()
    }

    /// A name for the slice's files, unique among the slices.
    fn key(&self) -> String {
        let rows = self.limit.map_or("all".into(), |n| n.to_string());
        let runner = match self.runner {
            Runner::OffPolicy => "off".to_string(),
            Runner::OnPolicy { step, batch } => format!("on{step}x{batch}"),
        };
        let path = self.python.map_or(String::new(), |p| format!("-py-{p}"));
        format!("{runner}-{}-{}-{rows}{path}", self.system, self.set_name)
    }

    /// The slice in the comparison table.
    pub fn describe(&self) -> String {
        let rows = self
            .limit
            .map_or("every row".into(), |n| format!("limit {n}"));
        let system = match self.python {
            Some(_) => format!("{} (upstream's own, through the Python path)", self.system),
            None => self.system.to_string(),
        };
        match self.runner {
            Runner::OffPolicy => format!("off-policy {system} on {}, {rows}", self.set_name),
            Runner::OnPolicy { step, batch } => format!(
                "on-policy {system} on {}, {rows}, {step} steps of {batch} rows",
                self.set_name
            ),
        }
    }
}

/// What upstream's own Python sends for `slice`.
pub fn upstream_requests(sides: &Sides, slice: &Slice, dir: &Path) -> Vec<Request> {
    let stub = Stub::start(dir, &format!("upstream-{}", slice.key()));
    let out = Command::new(&sides.python)
        .arg(root().join("scripts/upstream/run_upstream.py"))
        .arg("--upstream")
        .arg(&sides.upstream)
        .args(["--system", slice.system, "--set-name", slice.set_name])
        .args(slice.runner.flags().0)
        .args(slice.limit_flag())
        .args(["--model", MODEL])
        .args(["--base-url", &stub.base_url()])
        .arg("--out")
        .arg(dir.join(format!("upstream-{}", slice.key())))
        .args(
            slice
                .fixed_time
                .iter()
                .flat_map(|time| ["--fixed-time", time]),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "upstream's {} run failed: {}",
        slice.system,
        String::from_utf8_lossy(&out.stderr)
    );
    stub.requests()
}

/// What `mb-harness off-policy --upstream` sends for `slice`, with every role and the embedder
/// on a stub.
pub fn our_requests(sides: &Sides, slice: &Slice, dir: &Path) -> Vec<Request> {
    let stub = Stub::start(dir, &format!("ours-{}", slice.key()));
    let llm = dir.join(format!("llm-{}.toml", slice.key()));
    let roles: String = ["answer", "memory", "simulator", "judge", "critic"]
        .iter()
        .map(|role| {
            format!(
                "[{role}]\nprovider = \"vllm\"\nbase_url = \"{}\"\nmodel = \"{MODEL}\"\n\n",
                stub.base_url()
            )
        })
        .collect();
    std::fs::write(&llm, format!("output_handling = \"upstream\"\n\n{roles}")).unwrap();
    let embedder = dir.join(format!("embedder-{}.toml", slice.key()));
    std::fs::write(
        &embedder,
        format!(
            "base_url = \"{}\"\nmodel = \"Qwen/Qwen3-Embedding-0.6B\"\n",
            stub.base_url()
        ),
    )
    .unwrap();
    let run = dir.join(format!("ours-{}", slice.key()));
    let mut settings = Vec::new();
    if let Some(time) = slice.fixed_time {
        let file = dir.join(format!("{}.toml", slice.key()));
        let shipped =
            std::fs::read_to_string(root().join(format!("configs/memory/{}.toml", slice.system)))
                .unwrap();
        let fixed = shipped.replace(
            "timestamps = \"wall_clock\"",
            &format!("timestamps = \"{time}\""),
        );
        assert_ne!(
            fixed, shipped,
            "{} has no wall-clock timestamps",
            slice.system
        );
        std::fs::write(&file, fixed).unwrap();
        settings = vec!["--memory-config".into(), file.display().to_string()];
    }
    let mut baseline = slice.system.to_string();
    if let Some(solver) = slice.python {
        let file = dir.join(format!("{}.toml", slice.key()));
        let config = format!(
            "interpreter = {:?}\npath = [{:?}]\n[config]\ncheckout = {:?}\nsystem = {solver:?}\n",
            sides.python.display().to_string(),
            root().join("scripts/upstream").display().to_string(),
            sides.upstream.display().to_string(),
        );
        std::fs::write(&file, config).unwrap();
        settings = vec!["--memory-config".into(), file.display().to_string()];
        baseline = "py:upstream_solver:UpstreamSolver".into();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(slice.runner.flags().1)
        .args(["--dataset-type", "domain"])
        .args(["--set-name", slice.set_name, "--baseline", &baseline])
        .args(slice.limit_flag())
        .args(["--threads", "1"])
        .args(["--llm-cache", "off", "--llm"])
        .arg(&llm)
        .arg("--embedder")
        .arg(&embedder)
        .arg("--upstream")
        .arg(&sides.upstream)
        .arg("--store")
        .arg(run.join("store"))
        .arg("--output-dir")
        .arg(run.join("runs"))
        .args(&settings)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "our {} run failed: {}",
        slice.system,
        String::from_utf8_lossy(&out.stderr)
    );
    stub.requests()
}
