//! A sweep run as three shards sharing only an output directory gives the results of the same
//! sweep on one machine, and `report` merges the shards' runs.

use std::path::Path;

use serde_json::Value;

use crate::common::{assert_ok, harness, json, only_run};

const SYSTEMS: [&str; 4] = [
    "wo_memory",
    "bm25_message",
    "bm25_dialog",
    "embedder_message",
];

fn sweep(output: &Path, shard: &str) {
    let out = harness(&[
        "sweep",
        "--shard",
        shard,
        "--baseline",
        &SYSTEMS.join(","),
        "--output-dir",
        &output.display().to_string(),
        "--",
        "--limit",
        "2",
        "--date",
        "2026-01-01",
    ]);
    assert_ok(&out);
}

/// Each system's scores and case count.
fn results(output: &Path, system: &str) -> (Value, Value) {
    let run = only_run(output.join("off-policy/results/domain/Sample").join(system));
    let summary = json(run.join("summary.json"));
    (
        summary["summary"].clone(),
        summary["timing"]["cases"].clone(),
    )
}

#[test]
fn three_shards_equal_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let (one, three) = (dir.path().join("one"), dir.path().join("three"));
    sweep(&one, "0/1");
    for shard in ["0/3", "1/3", "2/3"] {
        sweep(&three, shard);
    }
    for system in SYSTEMS {
        let (scores, cases) = results(&one, system);
        assert!(
            scores.as_object().is_some_and(|s| !s.is_empty()),
            "{system}"
        );
        assert!(cases.as_u64().is_some_and(|n| n > 0), "{system}");
        assert_eq!(results(&three, system), (scores, cases), "{system}");
    }
    // Each shard had its own engine directory.
    let stores: Vec<_> = std::fs::read_dir(three.join("stores")).unwrap().collect();
    assert_eq!(stores.len(), 3);

    let page = three.join("report.html");
    assert_ok(&harness(&[
        "report",
        &three.display().to_string(),
        "--out",
        &page.display().to_string(),
    ]));
    let page = std::fs::read_to_string(page).unwrap();
    assert!(SYSTEMS.iter().all(|s| page.contains(s)));
}

#[test]
fn the_plan_lists_every_run_once_with_its_shard() {
    let out = harness(&[
        "plan",
        "--regimes",
        "off-policy,on-policy",
        "--baseline",
        &SYSTEMS.join(","),
        "--shards",
        "3",
    ]);
    assert!(!out.status.success(), "on-policy cannot run Vanilla");
    let out = harness(&[
        "plan",
        "--regimes",
        "off-policy,on-policy",
        "--baseline",
        "all",
        "--shards",
        "3",
        "--",
        "--limit",
        "2",
    ]);
    assert_ok(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert!(text.starts_with(&format!("{} runs in 3 shard(s)", lines.len())));
    for (i, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("shard {}: mb-harness ", i % 3)),
            "{line}"
        );
        assert!(line.ends_with("--limit 2"), "{line}");
    }
    assert!(lines
        .iter()
        .any(|l| l.contains("on-policy") && l.contains("--baseline mem0")));
    assert!(!lines
        .iter()
        .any(|l| l.contains("on-policy") && l.contains("wo_memory")));
}
