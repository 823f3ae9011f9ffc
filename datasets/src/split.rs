//! The two halves of a dataset, and upstream's train/test split (`get_test_ids`) for
//! regenerating them from raw data.

use std::fmt;

use crate::pyrandom::PyRandom;

/// Which half of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitName {
    /// Rows whose dialogs are memorized.
    Train,
    /// Rows the system is evaluated on.
    Test,
}

impl SplitName {
    /// `train` or `test`, as in file paths.
    pub fn as_str(self) -> &'static str {
        match self {
            SplitName::Train => "train",
            SplitName::Test => "test",
        }
    }
}

impl fmt::Display for SplitName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The seed upstream uses for every split.
pub const SPLIT_SEED: u64 = 42;

/// A dataset's split: test ids in selection order, train ids in the (truncated) loader order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Test ids.
    pub test: Vec<u64>,
    /// Train ids.
    pub train: Vec<u64>,
}

/// Splits `ids` (in loader order) as upstream's `get_test_ids(truncate_size, test_ratio=0.2)`:
/// keep a seeded sample of `truncate_size` ids when there are more, then draw
/// `ceil(0.2 · n)` test ids; every draw uses a fresh `Random(42)`.
pub fn test_ids(ids: &[u64], truncate_size: Option<usize>) -> Split {
    let kept: Vec<u64> = match truncate_size {
        Some(size) if ids.len() > size => PyRandom::new(SPLIT_SEED)
            .sample(ids, size)
            .unwrap_or_else(|| ids.to_vec()),
        _ => ids.to_vec(),
    };
    let test_count = (kept.len() as f64 * 0.2).ceil() as usize;
    let test = PyRandom::new(SPLIT_SEED)
        .sample(&kept, test_count)
        .unwrap_or_default();
    let train = kept.into_iter().filter(|id| !test.contains(id)).collect();
    Split { test, train }
}

/// Upstream's per-group split (HelloBench by category file, WritingBench by domain): every
/// group gives `ceil(0.2 · n_group)` test ids drawn with a fresh `Random(42)`, with no
/// truncation. Groups are visited in order of first appearance (upstream visits a Python set,
/// so its lists are ordered differently; membership is the same).
pub fn test_ids_by_group<G: PartialEq + Copy>(ids: &[(u64, G)]) -> Split {
    let mut groups: Vec<G> = Vec::new();
    for &(_, group) in ids {
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    let mut split = Split {
        test: Vec::new(),
        train: Vec::new(),
    };
    for group in groups {
        let members: Vec<u64> = ids
            .iter()
            .filter(|(_, g)| *g == group)
            .map(|&(id, _)| id)
            .collect();
        let count = (members.len() as f64 * 0.2).ceil() as usize;
        let test = PyRandom::new(SPLIT_SEED)
            .sample(&members, count)
            .unwrap_or_default();
        split
            .train
            .extend(members.iter().filter(|id| !test.contains(id)));
        split.test.extend(test);
    }
    split
}
