//! The off-policy memory in the store: a corpus dataset is answered on a copy, and so is every
//! dataset for a memory that questions change, so the trained memory is exactly the same
//! afterwards; and the memory is reused only when built from the same inputs.

use std::path::{Path, PathBuf};

use mb_engine::{Engine, EngineOptions};

use crate::common::{assert_ok, harness_in, json};

/// Every system with a memory.
const SYSTEMS: [&str; 7] = [
    "bm25_message",
    "bm25_dialog",
    "embedder_message",
    "embedder_dialog",
    "a_mem",
    "mem0",
    "memoryos",
];

fn off_policy(dir: &Path, system: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["off-policy", "--baseline", system, "--force"];
    args.extend(extra);
    harness_in(dir, &args)
}

fn latest_run(dir: &Path, system: &str) -> PathBuf {
    let runs = dir
        .join("runs/off-policy/results/domain/Sample")
        .join(system);
    let mut all: Vec<PathBuf> = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    all.sort();
    all.pop().unwrap()
}

/// The digest of the trained memory, and the namespaces of the store.
fn memory_state(dir: &Path, system: &str) -> (String, Vec<String>) {
    let engine = Engine::open(dir.join("store"), EngineOptions::default()).unwrap();
    let digest = engine
        .digest(&format!("off-policy/domain/Sample/{system}"))
        .unwrap();
    let names = engine.namespaces().into_iter().map(|n| n.name).collect();
    engine.close().unwrap();
    (digest, names)
}

/// The sample's off-policy run answers Sample-Locomo (a corpus dataset) and Sample-Stories. A
/// run resumed with every Sample-Stories case done answers only Sample-Locomo: the whole
/// trained memory (records, vectors, state) is the same before and after.
#[test]
fn answering_a_corpus_dataset_leaves_the_trained_memory_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let mut changed = Vec::new();
    for system in SYSTEMS {
        let flags = ["--embedder", "hashing"];
        assert_ok(&off_policy(dir.path(), system, &flags));
        let run = latest_run(dir.path(), system);

        let resumed = dir.path().join(format!("resumed-{system}"));
        std::fs::create_dir_all(&resumed).unwrap();
        std::fs::copy(run.join("run_config.json"), resumed.join("run_config.json")).unwrap();
        let stories: String = std::fs::read_to_string(run.join("predict.partial.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"dataset\":\"Sample-Stories\""))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(stories.lines().count(), 4, "{system}");
        std::fs::write(resumed.join("predict.partial.jsonl"), stories).unwrap();

        let (before, _) = memory_state(dir.path(), system);
        let mut args = flags.to_vec();
        args.extend(["--resume", resumed.to_str().unwrap()]);
        assert_ok(&off_policy(dir.path(), system, &args));
        let (after, names) = memory_state(dir.path(), system);
        if before != after {
            changed.push(system);
        }
        assert!(
            names.iter().all(|n| !n.contains("#copy")),
            "{system}: a copy was left behind: {names:?}"
        );
        // The corpus was answered on a copy that held it, and its ingestion was charged.
        let predictions = json(resumed.join("predict.json"));
        assert_eq!(predictions.as_array().unwrap().len(), 10, "{system}");
        let corpus = json(resumed.join("corpus_timing.json"));
        assert!(
            corpus["Sample-Locomo"]["seconds"].as_f64().unwrap() > 0.0,
            "{system}: {corpus}"
        );
    }
    assert!(
        changed.is_empty(),
        "answering Sample-Locomo changed the memory of {changed:?}"
    );
}

/// A second run reuses the memory the first one built and meets it exactly as built: answering
/// never changes it, not even for a memory whose retrieval does (MemoryOS's visits warm its
/// sessions, and warmer sessions are analysed sooner), so the second run makes the same model
/// calls per case.
#[test]
fn a_second_run_meets_the_memory_the_first_one_built() {
    let dir = tempfile::tempdir().unwrap();
    // Default flags: with feature hashing's vectors no MemoryOS session is similar enough to a
    // question to be visited. MemoryOS copies whole (`metadata_at_exit = false`): upstream's
    // first run copies its corpus dataset's memory without the metadata it writes at exit, so
    // that run's corpus ingestion costs differ from a later run's by design.
    let whole = dir.path().join("memoryos.toml");
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/memory/memoryos.toml"),
    )
    .unwrap();
    std::fs::write(
        &whole,
        shipped.replace("metadata_at_exit = true", "metadata_at_exit = false"),
    )
    .unwrap();
    let calls_per_case = |system: &str| {
        let summary = json(latest_run(dir.path(), system).join("summary.json"));
        summary["timing"]["llm_calls_per_case"].as_f64().unwrap()
    };
    for system in SYSTEMS {
        let flags: Vec<&str> = if system == "memoryos" {
            vec!["--memory-config", whole.to_str().unwrap()]
        } else {
            Vec::new()
        };
        assert_ok(&off_policy(dir.path(), system, &flags));
        let (first, _) = memory_state(dir.path(), system);
        let first_calls = calls_per_case(system);
        assert_ok(&off_policy(dir.path(), system, &flags));
        let (second, names) = memory_state(dir.path(), system);
        assert_eq!(first, second, "{system}: the second run changed the memory");
        assert_eq!(first_calls, calls_per_case(system), "{system}");
        assert!(
            names.iter().all(|n| !n.contains("#copy")),
            "{system}: a copy was left behind: {names:?}"
        );
    }
}

/// A memory built from other inputs (here the embedder) is rebuilt, saying so; the same inputs
/// reuse it, with the memorization recorded when it was built.
#[test]
fn a_memory_is_reused_only_when_built_from_the_same_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let system = "embedder_message";
    let run = |flags: &[&str]| {
        let out = off_policy(dir.path(), system, flags);
        assert_ok(&out);
        let memorized = json(latest_run(dir.path(), system).join("memorization.json"));
        (String::from_utf8(out.stderr).unwrap(), memorized)
    };
    let (_, built) = run(&["--embedder", "hashing"]);
    let (stderr, reused) = run(&["--embedder", "hashing"]);
    assert!(!stderr.contains("stale"), "{stderr}");
    assert_eq!(reused, built);

    // The default embedder (all-MiniLM-L6-v2) instead of feature hashing.
    let (stderr, rebuilt) = run(&[]);
    assert!(
        stderr.contains("is stale") && stderr.contains("embedder hashing"),
        "{stderr}"
    );
    assert_ne!(rebuilt, built, "the memory was not built again");
    let (stderr, again) = run(&[]);
    assert!(!stderr.contains("stale"), "{stderr}");
    assert_eq!(again, rebuilt);

    // Back to feature hashing: built again, not the first memory's marker.
    let (stderr, _) = run(&["--embedder", "hashing"]);
    assert!(stderr.contains("is stale"), "{stderr}");
}

/// A memory no model shapes (BM25, embeddings) is reused whatever models the run names: only
/// the answers change when `--llm` points the answer and memory roles at a server.
#[test]
fn a_bm25_memory_is_reused_when_only_the_models_change() {
    let port = crate::common::chat_server(
        |_| serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "Biscuit."}, "finish_reason": "stop"}]}),
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = dir.path().join("llm.toml");
    let endpoint = format!(
        "provider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n"
    );
    std::fs::write(
        &llm,
        format!(
            "[answer]\n{endpoint}[memory]\n{endpoint}[simulator]\nprovider = \"offline\"\n[judge]\nprovider = \"offline\"\n"
        ),
    )
    .unwrap();
    let system = "bm25_message";
    assert_ok(&off_policy(dir.path(), system, &[]));
    let built = json(latest_run(dir.path(), system).join("memorization.json"));
    let out = off_policy(
        dir.path(),
        system,
        &["--llm", llm.to_str().unwrap(), "--llm-cache", "off"],
    );
    assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("stale"), "{stderr}");
    let reused = json(latest_run(dir.path(), system).join("memorization.json"));
    assert_eq!(reused, built);
    let predictions = json(latest_run(dir.path(), system).join("predict.json"));
    assert!(predictions
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["response"] == "Biscuit."));
}
