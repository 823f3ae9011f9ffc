//! Crash safety: a child process writes continuously and reports every acknowledged write; the
//! parent kills it with SIGKILL at random moments, reopens the engine and checks that every
//! acknowledged write is stored once and found by both indexes.
//!
//! The child is this same test binary running the ignored test `crash_child_writer`.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mb_engine::{Batch, Engine, EngineOptions, NamespaceOptions, NewRecord, RecordId, Space};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const DIR_VAR: &str = "MB_CRASH_DIR";
const SEED_VAR: &str = "MB_CRASH_SEED";
/// `NAME:HITS`: the child aborts itself the HITS-th time it reaches fault point NAME.
const FAULT_VAR: &str = "MB_CRASH_FAULT";
const DIM: usize = 8;
const NAMESPACES: [&str; 2] = ["left", "right"];

/// The unique word and vector of the record written as write number `n` of round `round`.
fn token(round: u64, n: u64) -> String {
    format!("tok{round}x{n}")
}

fn vector(round: u64, n: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(round * 1_000_003 + n);
    (0..DIM).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// Rounds of `crash_recovery`; `MB_CRASH_ROUNDS` runs more (docs/testing.md reports 200).
const ROUNDS_VAR: &str = "MB_CRASH_ROUNDS";

/// The reopened engine's settings: exact vector search, so that every check is exact.
fn options() -> EngineOptions {
    let mut options = EngineOptions::default();
    // Short interval so kills land before, during and after lexical commits.
    options.lexical_commit_interval = Duration::from_millis(30);
    options.hnsw.threshold = usize::MAX;
    options
}

/// The writer's settings: also HNSW graphs built in the background from 64 vectors on, so
/// that kills land during builds and graph swaps too.
fn writer_options() -> EngineOptions {
    let mut options = options();
    options.hnsw.threshold = 64;
    options.hnsw.rebuild_dead_fraction = 0.05;
    options
}

/// Child: writes until killed, printing `ack <round> <n> <ns> <id>` after each acknowledged put,
/// and `deleting <ns> <id>` before and `del <ns> <id>` after each delete.
#[test]
#[ignore = "run by crash_recovery as a child process"]
fn crash_child_writer() {
    let (Ok(dir), Ok(seed)) = (std::env::var(DIR_VAR), std::env::var(SEED_VAR)) else {
        return;
    };
    let round: u64 = seed.parse().unwrap();
    let engine = Engine::open(&dir, writer_options()).unwrap();
    for ns in NAMESPACES {
        engine
            .ensure_namespace(ns, NamespaceOptions::default())
            .unwrap();
    }
    engine.create_space(Space::new("s", DIM)).unwrap();
    if let Some(fault) = std::env::var(FAULT_VAR).ok().filter(|f| !f.is_empty()) {
        let (name, hits) = fault.rsplit_once(':').unwrap();
        let hits: usize = hits.parse().unwrap();
        let reached = std::sync::atomic::AtomicUsize::new(0);
        fail::cfg_callback(name, move || {
            if reached.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 >= hits {
                // A crash exactly here: no destructor, no flush.
                std::process::abort();
            }
        })
        .unwrap();
    }
    // One writer thread per namespace, so kills land while two writes are under way.
    std::thread::scope(|scope| {
        for (thread, ns) in NAMESPACES.into_iter().enumerate() {
            let engine = &engine;
            scope.spawn(move || write_until_killed(engine, round, thread as u64, ns));
        }
    });
}

/// One writer thread of [`crash_child_writer`]: its writes are numbered `n = 2i + thread`.
fn write_until_killed(engine: &Engine, round: u64, thread: u64, ns: &'static str) {
    let mut rng = StdRng::seed_from_u64(round * 2 + thread);
    let mut mine: Vec<(&str, RecordId)> = Vec::new();
    for i in 0u64.. {
        let n = 2 * i + thread;
        // Paced so a round leaves a few hundred writes to verify, not tens of thousands.
        std::thread::sleep(Duration::from_micros(800));
        if i % 5 == 4 && !mine.is_empty() {
            let (ns, id) = mine.swap_remove(rng.random_range(0..mine.len()));
            // Announced first: if the kill lands between the delete and its report, the
            // parent accepts the record either way.
            println!("deleting {ns} {id}");
            engine.delete(ns, id).unwrap();
            println!("del {ns} {id}");
            continue;
        }
        let record = NewRecord::new(format!(
            "memory {} written in round {round}",
            token(round, n)
        ))
        .with_vector("s", vector(round, n));
        let id = if i % 3 == 0 {
            // A multi-record batch is acknowledged as a whole.
            let mut batch = Batch::new();
            batch.put(record);
            batch.put_state(format!("last/{round}"), &n).unwrap();
            engine.write(ns, batch).unwrap().ids[0]
        } else {
            engine.put(ns, record).unwrap()
        };
        mine.push((ns, id));
        println!("ack {round} {n} {ns} {id}");
        if i % 25 == 0 {
            // Searches load the vector collections, which then build graphs in the background.
            engine.search_vector(ns, "s", &vector(round, n), 3).unwrap();
        }
    }
}

struct Acked {
    round: u64,
    n: u64,
    ns: String,
}

/// Everything the parent learned from the children.
#[derive(Default)]
struct Log {
    acked: HashMap<u64, Acked>,
    /// Deletes that were acknowledged: the record must be gone.
    deleted: HashSet<u64>,
    /// Deletes that were started: the record may or may not be gone.
    doomed: HashSet<u64>,
}

/// How a child writer's round ends.
enum Ending<'a> {
    /// SIGKILL after a random moment.
    Kill,
    /// The child aborts itself at a fault point, the given time it reaches it.
    FaultPoint(&'a str, usize),
}

fn run_round(dir: &Path, round: u64, ending: Ending, log: &mut Log) {
    let Log {
        acked,
        deleted,
        doomed,
    } = log;
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash::crash_child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DIR_VAR, dir)
        .env(SEED_VAR, round.to_string())
        .env(
            FAULT_VAR,
            match ending {
                Ending::Kill => String::new(),
                Ending::FaultPoint(name, hits) => format!("{name}:{hits}"),
            },
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut rng = StdRng::seed_from_u64(round + 99);
    let kill_after = Duration::from_millis(rng.random_range(150..900));
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    match ending {
        Ending::Kill => {
            while start.elapsed() < kill_after {
                std::thread::sleep(Duration::from_millis(5));
            }
            // SIGKILL: no destructor, no flush.
            child.kill().unwrap();
            child.wait().unwrap();
        }
        Ending::FaultPoint(name, hits) => loop {
            if let Some(status) = child.try_wait().unwrap() {
                use std::os::unix::process::ExitStatusExt;
                // SIGABRT (6): the abort at the fault point, not a failure elsewhere.
                assert_eq!(status.signal(), Some(6), "{name}: {status}");
                break;
            }
            if start.elapsed() > Duration::from_secs(60) {
                child.kill().unwrap();
                panic!("fault point {name} was not reached {hits} times in a minute");
            }
            std::thread::sleep(Duration::from_millis(5));
        },
    }
    reader.join().unwrap();
    for line in rx.try_iter() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["ack", r, n, ns, id] => {
                let id: u64 = id.parse().unwrap();
                let prev = acked.insert(
                    id,
                    Acked {
                        round: r.parse().unwrap(),
                        n: n.parse().unwrap(),
                        ns: ns.to_string(),
                    },
                );
                assert!(prev.is_none(), "record id {id} acknowledged twice");
            }
            ["del", _, id] => {
                deleted.insert(id.parse().unwrap());
            }
            ["deleting", _, id] => {
                doomed.insert(id.parse().unwrap());
            }
            _ => {}
        }
    }
}

fn verify(dir: &Path, log: &Log) {
    let Log {
        acked,
        deleted,
        doomed,
    } = log;
    let engine = Engine::open(dir, options()).unwrap();
    for ns in NAMESPACES {
        let ids: Vec<u64> = engine
            .records(ns)
            .unwrap()
            .map(|r| r.unwrap().id.0)
            .collect();
        let unique: HashSet<u64> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "duplicate records in {ns}");
        assert_eq!(engine.count(ns).unwrap(), ids.len() as u64, "count of {ns}");
        for id in &unique {
            // Unacknowledged writes may survive (they reached the log before the kill).
            if let Some(a) = acked.get(id) {
                assert_eq!(a.ns, ns);
            }
        }
    }
    for (id, a) in acked {
        let record = engine.get(&a.ns, RecordId(*id)).unwrap();
        if deleted.contains(id) {
            assert!(record.is_none(), "deleted record {id} came back");
            continue;
        }
        if doomed.contains(id) && record.is_none() {
            continue;
        }
        let record = record.unwrap_or_else(|| panic!("acknowledged record {id} lost"));
        let tok = token(a.round, a.n);
        assert!(record.text.contains(&tok));
        let lexical = engine.search_text(&a.ns, &tok, 3).unwrap();
        assert_eq!(lexical.len(), 1, "lexical index: {tok}");
        assert_eq!(lexical[0].record.id.0, *id);
        let nearest = engine
            .search_vector(&a.ns, "s", &vector(a.round, a.n), 1)
            .unwrap();
        assert_eq!(nearest[0].record.id.0, *id, "vector index: {tok}");
        assert!((nearest[0].score - 1.0).abs() < 1e-4);
    }
    engine.close().unwrap();
}

#[test]
fn crash_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    let mut log = Log::default();
    let rounds: u64 = std::env::var(ROUNDS_VAR)
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(24);
    for round in 1..=rounds {
        run_round(&path, round, Ending::Kill, &mut log);
        // Ten checks along a long run (each reads every acknowledged write back).
        if round % (rounds / 10).max(4) == 0 {
            verify(&path, &log);
        }
    }
    assert!(
        log.acked.len() > 100,
        "only {} acknowledged writes; the child barely ran",
        log.acked.len()
    );
    assert!(!log.deleted.is_empty());
    verify(&path, &log);
    eprintln!(
        "{rounds} rounds: {} acknowledged writes, {} acknowledged deletes checked, none lost",
        log.acked.len(),
        log.deleted.len()
    );
}

/// The engine's named fault points (`fail::fail_point!`): a crash right before the store
/// write, right after it and before the lexical index has it, inside a lexical commit, and
/// while a freshly built HNSW graph is swapped in. Each is hit at several counts, then
/// everything is checked.
#[test]
fn crash_recovery_at_fault_points() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    let mut log = Log::default();
    let mut round = 1000;
    for name in [
        "engine::write::refused",
        "engine::write::stored",
        "engine::lexical::commit",
        "engine::vector::install",
    ] {
        for hits in [1, 3, 7] {
            round += 1;
            run_round(&path, round, Ending::FaultPoint(name, hits), &mut log);
            verify(&path, &log);
        }
    }
    assert!(!log.acked.is_empty());
}
