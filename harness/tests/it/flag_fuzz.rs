//! Arbitrary command lines within clap's grammar, with hostile values and damaged settings
//! files, through the real binary: each ends in a run or a clean error (exit 0, 1 or 2, no
//! panic, no signal), within a time limit and a memory limit. 24 command lines by default;
//! `MB_FUZZ_CASES=N` runs more, `MB_FUZZ_SEED=S` replays one sequence.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Longest a command may take before it counts as hung (the longest sample runs take about a
/// minute on a busy two-core machine).
const TIME_LIMIT: Duration = Duration::from_secs(300);
/// Most private memory a command may map (`RLIMIT_DATA`); over it, allocation fails and the
/// process aborts, which the test reports.
const MEMORY_LIMIT: u64 = 6 << 30;

/// The subcommands that run without a server or other processes, with the flags each takes
/// (`sweep` starts processes and `--llm local` a model server: both are tested elsewhere).
const COMMANDS: [(&str, &[&str]); 10] = [
    ("off-policy", &RUN_FLAGS_OFF_POLICY),
    ("train-performance", &RUN_FLAGS),
    ("stepwise-off-policy", &RUN_FLAGS_STEPWISE),
    ("on-policy", &RUN_FLAGS_ON_POLICY),
    ("retrieve", &RETRIEVE_FLAGS),
    (
        "evaluate",
        &["--data", "--llm", "--llm-cache", "--store", "RUN"],
    ),
    (
        "summarize",
        &["--data", "--llm", "--llm-cache", "--store", "RUN"],
    ),
    (
        "import",
        &[
            "--out",
            "--locomo",
            "--nfcats",
            "--lexeval-qa",
            "--hellobench",
        ],
    ),
    ("report", &["--out", "RUN"]),
    ("plan", &["--regimes", "--sets", "--baseline", "--shards"]),
];

const RUN_FLAGS: [&str; 15] = [
    "--dataset-type",
    "--set-name",
    "--baseline",
    "--data",
    "--llm",
    "--llm-cache",
    "--embedder",
    "--threads",
    "--retrieve-k",
    "--memory-config",
    "--force",
    "--resume",
    "--limit",
    "--date",
    "--baseline",
];
const RUN_FLAGS_OFF_POLICY: [&str; 18] =
    concat(RUN_FLAGS, ["--longmemeval", "--reading", "--history"]);
const RUN_FLAGS_STEPWISE: [&str; 16] = concat(RUN_FLAGS, ["--batch-size"]);
const RUN_FLAGS_ON_POLICY: [&str; 19] = concat(
    RUN_FLAGS,
    [
        "--step",
        "--batch-size",
        "--max-rounds",
        "--answer-feedback",
    ],
);
const RETRIEVE_FLAGS: [&str; 11] = [
    "--baseline",
    "--locomo",
    "--longmemeval",
    "--history",
    "--limit",
    "--k",
    "--budget",
    "--embedder",
    "--memory-config",
    "--date",
    "--json",
];

/// `a` followed by `b`, as a constant.
const fn concat<const A: usize, const B: usize, const C: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; C] {
    let mut out = [""; C];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < C {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// Values anyone might type, or no one would: for any flag.
const HOSTILE: [&str; 16] = [
    "",
    "0",
    "-1",
    "1",
    "3",
    "18446744073709551616",
    "nan",
    "inf",
    "1e308",
    "é",
    "\u{202e}evil",
    "../../etc",
    "/dev/zero",
    "/nonexistent/file.toml",
    "a b c",
    "--",
];

/// Files made for this sequence: settings mutated from the shipped ones, datasets, a run.
struct Files {
    dir: PathBuf,
    made: usize,
}

impl Files {
    fn path(&mut self, name: &str) -> PathBuf {
        self.made += 1;
        self.dir.join(format!("{}-{name}", self.made))
    }

    /// A shipped settings file under `configs/`, mutated one way or another.
    fn settings(&mut self, rng: &mut StdRng, shipped: &str) -> String {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut text = std::fs::read_to_string(root.join(shipped)).unwrap();
        match rng.random_range(0..6) {
            0 => {
                // A value replaced with a hostile one.
                let lines: Vec<&str> = text.lines().collect();
                let candidates: Vec<usize> = (0..lines.len())
                    .filter(|&i| lines[i].contains(" = ") && !lines[i].starts_with('#'))
                    .collect();
                if !candidates.is_empty() {
                    let at = candidates[rng.random_range(0..candidates.len())];
                    let key = lines[at].split(" = ").next().unwrap_or_default();
                    let values = ["nan", "inf", "-1.0", "0", "1e400", "\"\"", "\"x\"", "[]", "9999999999999999999"];
                    let value = values[rng.random_range(0..values.len())];
                    let mut owned: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                    owned[at] = format!("{key} = {value}");
                    text = owned.join("\n");
                }
            }
            1 => {
                // Cut short at a random character.
                let cut = rng.random_range(0..=text.chars().count());
                text = text.chars().take(cut).collect();
            }
            2 => text.push_str("\nunknown_key = 1\n"),
            3 => text.push_str("\n[answer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n"),
            4 => text = text.repeat(2),
            _ => {}
        }
        let path = self.path(&shipped.replace('/', "-"));
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    /// The tiny LongMemEval fixture, whole or cut short.
    fn longmemeval(&mut self, rng: &mut StdRng) -> String {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../datasets/tests/fixtures/longmemeval_tiny.json");
        let text = std::fs::read_to_string(fixture).unwrap();
        let cut = if rng.random_bool(0.5) {
            text.len()
        } else {
            rng.random_range(0..text.len())
        };
        let path = self.path("longmemeval.json");
        std::fs::write(&path, &text.as_bytes()[..cut]).unwrap();
        path.display().to_string()
    }
}

/// A value for `flag`: mostly one that fits it, sometimes a hostile one.
fn value(rng: &mut StdRng, files: &mut Files, flag: &str) -> String {
    if rng.random_bool(0.25) {
        return HOSTILE[rng.random_range(0..HOSTILE.len())].to_string();
    }
    let pick = |rng: &mut StdRng, options: &[&str]| {
        options[rng.random_range(0..options.len())].to_string()
    };
    match flag {
        "--baseline" => pick(
            rng,
            &[
                "bm25_message",
                "bm25_dialog",
                "wo_memory",
                "embedder_dialog",
                "hybrid",
                "mem0",
                "a_mem",
                "memoryos",
                "nope",
            ],
        ),
        "--dataset-type" => pick(rng, &["domain", "task", "single", "nope"]),
        "--set-name" => pick(rng, &["Sample", "Locomo-0", "Open-Domain", "x"]),
        "--llm" => match rng.random_range(0..3) {
            0 => "offline".to_string(),
            _ => files.settings(rng, "llm/offline.toml"),
        },
        "--llm-cache" => pick(rng, &["off", "record", "replay", "maybe"]),
        "--embedder" => match rng.random_range(0..4) {
            0 => files.settings(rng, "embedder/paper.toml"),
            _ => "hashing".to_string(),
        },
        "--memory-config" => {
            let shipped = pick(
                rng,
                &[
                    "memory/bm25.toml",
                    "memory/hybrid.toml",
                    "memory/mem0.toml",
                    "memory/a_mem.toml",
                    "memory/memoryos.toml",
                    "memory/embedder.toml",
                ],
            );
            files.settings(rng, &shipped)
        }
        "--threads" | "--limit" | "--step" | "--batch-size" | "--max-rounds" | "--shards" => {
            rng.random_range(1..6u32).to_string()
        }
        "--retrieve-k" | "--k" | "--budget" => pick(rng, &["1", "5", "10", "10000", "3,5"]),
        "--date" => pick(
            rng,
            &["2026-02-28", "2026-02-30", "2024-02-29", "yesterday"],
        ),
        "--longmemeval" => files.longmemeval(rng),
        "--locomo" | "--nfcats" | "--lexeval-qa" | "--hellobench" => files.longmemeval(rng),
        "--reading" => pick(rng, &["plain", "chain-of-note", "x"]),
        "--history" => pick(rng, &["all", "user", "x"]),
        "--regimes" => pick(rng, &["off-policy", "on-policy,off-policy", "x"]),
        "--sets" => pick(rng, &["domain/Sample", "single/Locomo-0", "x"]),
        "--data" | "--resume" | "--out" | "--json" => files.path("out").display().to_string(),
        _ => pick(rng, &HOSTILE),
    }
}

/// A command line for one of [`COMMANDS`], with zero to four of its flags.
fn command_line(rng: &mut StdRng, files: &mut Files) -> Vec<String> {
    let (command, flags) = COMMANDS[rng.random_range(0..COMMANDS.len())];
    let mut args = vec![command.to_string()];
    for _ in 0..rng.random_range(0..=4) {
        let flag = flags[rng.random_range(0..flags.len())];
        match flag {
            "RUN" => args.push(files.path("run").display().to_string()),
            "--force" | "--answer-feedback" => args.push(flag.to_string()),
            _ => {
                let value = value(rng, files, flag);
                args.push(format!("{flag}={value}"));
            }
        }
    }
    if command == "retrieve" && !args.iter().any(|a| a.starts_with("--baseline")) {
        args.push("--baseline=bm25_message".to_string());
    }
    args
}

/// Runs `args` in `dir` under the time and memory limits; panics with the command line and
/// the seed unless it ended in a run or a clean error.
fn run_bounded(args: &[String], dir: &Path, seed: u64) -> Option<i32> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mb-harness"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap());
    let limit = libc::rlimit {
        rlim_cur: MEMORY_LIMIT,
        rlim_max: MEMORY_LIMIT,
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child about to exec.
    unsafe {
        command.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_DATA, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > TIME_LIMIT {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("seed {seed}: {args:?} ran over {TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr =
        String::from_utf8_lossy(&std::fs::read(dir.join("stderr.txt")).unwrap()).into_owned();
    let clean = matches!(status.code(), Some(0..=2))
        && !stderr.contains("panicked")
        && !stderr.contains("fatal runtime error")
        && !stderr.contains("memory allocation");
    assert!(clean, "seed {seed}: {args:?} ended with {status}: {stderr}");
    if status.code() == Some(1) {
        let lines = stderr.lines().count();
        assert!(lines <= 3, "seed {seed}: {args:?}: {lines} lines: {stderr}");
    }
    status.code()
}

#[test]
fn arbitrary_command_lines_run_or_fail_cleanly() {
    let cases: usize = std::env::var("MB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let seed: u64 = std::env::var("MB_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261126);
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Files {
        dir: dir.path().join("files"),
        made: 0,
    };
    std::fs::create_dir_all(&files.dir).unwrap();
    let mut by_exit = std::collections::BTreeMap::new();
    for case in 0..cases {
        let args = command_line(&mut rng, &mut files);
        let cwd = dir.path().join(format!("case-{case}"));
        std::fs::create_dir_all(&cwd).unwrap();
        *by_exit.entry(run_bounded(&args, &cwd, seed)).or_insert(0) += 1;
    }
    println!("{cases} command lines, by exit code: {by_exit:?}");
}
