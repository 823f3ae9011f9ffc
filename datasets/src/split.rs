//! Upstream's train/test split (`get_test_ids`), for regenerating splits from raw data.

use crate::pyrandom::PyRandom;

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
