//! Which runs may share a chart. Two runs are comparable when they ran the same regime on the
//! same set with the same answer model, the same `--limit`, `--retrieve-k`, prompts' wording
//! and data, and answered the same number of cases; a memory embedder must match too, but a
//! system without one (BM25, `vanilla`) is comparable with runs of any. A page shows one
//! section per group of comparable runs, holding the newest run of each system in it: a
//! four-case trial with a local model never replaces, nor stands beside, a full offline run.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::Path;

use super::key::GroupKey;
use super::runs::RunRow;

/// The scores of each system over the steps of its run: (system, [(step, score)]).
pub(super) type Curves = Vec<(String, Vec<(String, f64)>)>;

/// Comparable runs: the newest run of each system with this key.
#[derive(Debug, Clone)]
pub(super) struct Group {
    /// What the runs share.
    pub key: GroupKey,
    /// The runs (each step of a stepwise or on-policy run a row), by step, then system.
    pub rows: Vec<RunRow>,
    /// Each system's score after every step of its run, for a group of stepwise or
    /// on-policy runs.
    pub curves: Curves,
}

/// Sorts `found` into groups of comparable runs, by regime and set, the most cases first. A run without a
/// memory embedder joins every group of its other key with one, or a group of its own when
/// there is none.
pub(super) fn groups(found: &[RunRow]) -> Vec<Group> {
    let mut by_key: BTreeMap<GroupKey, Vec<&RunRow>> = BTreeMap::new();
    for row in found {
        let key = GroupKey {
            memory_embedder: None,
            ..row.key.clone()
        };
        by_key.entry(key).or_default().push(row);
    }
    let mut groups = Vec::new();
    for (key, rows) in by_key {
        let embedders: BTreeSet<&String> = rows
            .iter()
            .filter_map(|r| r.key.memory_embedder.as_ref())
            .collect();
        if embedders.is_empty() {
            groups.push(group(key, &rows));
            continue;
        }
        for embedder in embedders {
            let members: Vec<&RunRow> = rows
                .iter()
                .copied()
                .filter(|r| r.key.memory_embedder.as_ref().is_none_or(|e| e == embedder))
                .collect();
            let key = GroupKey {
                memory_embedder: Some(embedder.clone()),
                ..key.clone()
            };
            groups.push(group(key, &members));
        }
    }
    // By regime and set; of one, the groups answering the most cases (full runs) first.
    groups.sort_by(|a, b| {
        let order = |k: &GroupKey| (k.regime.clone(), k.set.clone(), Reverse(k.cases));
        order(&a.key)
            .cmp(&order(&b.key))
            .then_with(|| a.key.cmp(&b.key))
    });
    groups
}

/// The group of `key` holding the newest run of each system among `rows`.
fn group(key: GroupKey, rows: &[&RunRow]) -> Group {
    // The newest run per system: run directories are named by their start time
    // (`start_at_…`), so the name orders them, whichever result directory holds them.
    let mut newest: BTreeMap<&str, &Path> = BTreeMap::new();
    let age = |dir: &Path| (dir.file_name().map(OsStr::to_os_string), dir.to_path_buf());
    for row in rows {
        let dir = row.run_dir.as_path();
        if newest
            .get(row.system.as_str())
            .is_none_or(|old| age(old) < age(dir))
        {
            newest.insert(&row.system, dir);
        }
    }
    let mut kept: Vec<RunRow> = rows
        .iter()
        .filter(|r| newest.get(r.system.as_str()) == Some(&r.run_dir.as_path()))
        .map(|r| (*r).clone())
        .collect();
    kept.sort_by(|a, b| {
        let order = |r: &RunRow| r.step.as_deref().map(step_order);
        (order(a), &a.step, &a.system).cmp(&(order(b), &b.step, &b.system))
    });
    let curves = learning_curves(&kept);
    Group {
        key,
        rows: kept,
        curves,
    }
}

/// Each system's score after every step of its run, steps in order (`rows` sorted by step).
fn learning_curves(rows: &[RunRow]) -> Curves {
    let mut curves: BTreeMap<&str, Vec<(String, f64)>> = BTreeMap::new();
    for row in rows {
        if let Some(step) = &row.step {
            curves
                .entry(&row.system)
                .or_default()
                .push((step.clone(), row.score.unwrap_or(0.0)));
        }
    }
    curves
        .into_iter()
        .map(|(system, points)| (system.to_string(), points))
        .collect()
}

/// Where a step comes: `begin` first, then by the first number in its name (`[100,200)`,
/// `step_3`).
pub(crate) fn step_order(step: &str) -> i64 {
    let digits: String = step
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(-1)
}
