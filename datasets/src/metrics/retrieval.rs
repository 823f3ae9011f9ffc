//! Retrieval quality where evidence labels exist (LoCoMo's `evidence` turn ids): what a memory
//! system retrieved for a question, against the turns that answer it. Not an upstream metric;
//! it separates "the memory found the evidence" from "the model used it".

use std::collections::HashSet;
use std::hash::Hash;

/// Share of the relevant items among the first `k` retrieved; `None` without relevant items.
pub fn recall_at_k<T: Eq + Hash>(retrieved: &[T], relevant: &HashSet<T>, k: usize) -> Option<f64> {
    if relevant.is_empty() {
        return None;
    }
    let found: HashSet<&T> = retrieved
        .iter()
        .take(k)
        .filter(|r| relevant.contains(r))
        .collect();
    Some(found.len() as f64 / relevant.len() as f64)
}

/// Binary-relevance NDCG of the first `k` retrieved (a relevant item counts once, at its first
/// rank); `None` without relevant items.
pub fn ndcg_at_k<T: Eq + Hash>(retrieved: &[T], relevant: &HashSet<T>, k: usize) -> Option<f64> {
    if relevant.is_empty() {
        return None;
    }
    let gain = |rank: usize| 1.0 / ((rank + 2) as f64).log2();
    let mut seen = HashSet::new();
    let dcg: f64 = retrieved
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, r)| relevant.contains(*r) && seen.insert(*r))
        .map(|(rank, _)| gain(rank))
        .sum();
    let ideal: f64 = (0..k.min(relevant.len())).map(gain).sum();
    Some(if ideal > 0.0 { dcg / ideal } else { 0.0 })
}

/// Reciprocal rank of the first relevant item retrieved (0 when none is); `None` without
/// relevant items.
pub fn reciprocal_rank<T: Eq + Hash>(retrieved: &[T], relevant: &HashSet<T>) -> Option<f64> {
    if relevant.is_empty() {
        return None;
    }
    Some(
        retrieved
            .iter()
            .position(|r| relevant.contains(r))
            .map_or(0.0, |rank| 1.0 / (rank + 1) as f64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_by_hand() {
        let relevant: HashSet<&str> = ["D1:3", "D2:5"].into_iter().collect();
        let retrieved = ["D1:1", "D2:5", "D1:3", "D2:5"];
        assert_eq!(recall_at_k(&retrieved, &relevant, 1), Some(0.0));
        assert_eq!(recall_at_k(&retrieved, &relevant, 2), Some(0.5));
        assert_eq!(recall_at_k(&retrieved, &relevant, 10), Some(1.0));
        assert_eq!(reciprocal_rank(&retrieved, &relevant), Some(0.5));
        // DCG@3 = 1/log2(3) + 1/log2(4); IDCG@3 = 1 + 1/log2(3); the repeat adds nothing.
        let expected = (1.0 / 3f64.log2() + 0.5) / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg_at_k(&retrieved, &relevant, 3).unwrap() - expected).abs() < 1e-12);
        assert_eq!(
            ndcg_at_k(&retrieved, &relevant, 4),
            ndcg_at_k(&retrieved, &relevant, 3)
        );
        let none: HashSet<&str> = HashSet::new();
        assert_eq!(recall_at_k(&retrieved, &none, 5), None);
        assert_eq!(reciprocal_rank(&["x"], &relevant), Some(0.0));
    }
}
