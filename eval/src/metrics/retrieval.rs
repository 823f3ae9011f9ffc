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

/// 1 when one of the first `k` distinct groups of a ranking is relevant, else 0; `None` without
/// relevant groups. Over sessions (each retrieved unit's session, in rank order), it is the
/// session-level hit rate published retrievers report (engram-search's "R@5": any evidence
/// session among the first five distinct sessions).
pub fn hit_at_k<T: Eq + Hash>(ranked: &[T], relevant: &HashSet<T>, k: usize) -> Option<f64> {
    if relevant.is_empty() {
        return None;
    }
    let mut seen = HashSet::new();
    let hit = ranked
        .iter()
        .filter(|g| seen.insert(*g))
        .take(k)
        .any(|g| relevant.contains(g));
    Some(if hit { 1.0 } else { 0.0 })
}

/// Share of the relevant turns among the first `k` turns of a ranking of units, each unit
/// expanded into the turns it covers, in order (a turn seen before is not counted again); `None`
/// without relevant turns. Systems whose units are single turns get their unit recall; larger
/// units spend more of the `k` turns each, so unit sizes compare fairly.
pub fn turn_recall_at_k<T: Eq + Hash>(
    units: &[&[T]],
    relevant: &HashSet<T>,
    k: usize,
) -> Option<f64> {
    if relevant.is_empty() {
        return None;
    }
    let mut seen = HashSet::new();
    let found = units
        .iter()
        .flat_map(|turns| turns.iter())
        .filter(|t| seen.insert(*t))
        .take(k)
        .filter(|t| relevant.contains(*t))
        .count();
    Some(found as f64 / relevant.len() as f64)
}

/// Share of the relevant turns covered by the units that fit whole in the first `budget`
/// tokens of retrieved text (each unit given as its token count and covered turns, best
/// first; the first unit that does not fit ends the context); `None` without relevant turns.
/// It measures what a prompt of that size would actually hold.
pub fn budget_recall<T: Eq + Hash>(
    units: &[(usize, &[T])],
    relevant: &HashSet<T>,
    budget: usize,
) -> Option<f64> {
    if relevant.is_empty() {
        return None;
    }
    let mut spent = 0;
    let mut found = HashSet::new();
    for (tokens, turns) in units {
        spent += tokens;
        if spent > budget {
            break;
        }
        found.extend(turns.iter().filter(|t| relevant.contains(*t)));
    }
    Some(found.len() as f64 / relevant.len() as f64)
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

    #[test]
    fn turn_recall_expands_units_in_order() {
        let relevant: HashSet<&str> = ["D1:3", "D2:5"].into_iter().collect();
        let a: &[&str] = &["D1:1", "D1:2"];
        let b: &[&str] = &["D1:2", "D1:3"];
        let c: &[&str] = &["D2:5"];
        // Turns in order: D1:1, D1:2, D1:3 (the repeated D1:2 counts once), D2:5.
        let units = [a, b, c];
        assert_eq!(turn_recall_at_k(&units, &relevant, 2), Some(0.0));
        assert_eq!(turn_recall_at_k(&units, &relevant, 3), Some(0.5));
        assert_eq!(turn_recall_at_k(&units, &relevant, 4), Some(1.0));
        // Single-turn units: the same as unit recall.
        let singles: Vec<&[&str]> = vec![&["D1:1"], &["D2:5"], &["D1:3"]];
        let flat = ["D1:1", "D2:5", "D1:3"];
        for k in 1..4 {
            assert_eq!(
                turn_recall_at_k(&singles, &relevant, k),
                recall_at_k(&flat, &relevant, k)
            );
        }
        assert_eq!(turn_recall_at_k(&units, &HashSet::new(), 3), None);
    }

    #[test]
    fn hit_counts_distinct_groups() {
        let relevant: HashSet<&str> = ["D3"].into_iter().collect();
        // Distinct sessions in order: D1, D2, D3 (repeats of D1 take no place).
        let ranked = ["D1", "D1", "D2", "D1", "D3", "D4"];
        assert_eq!(hit_at_k(&ranked, &relevant, 2), Some(0.0));
        assert_eq!(hit_at_k(&ranked, &relevant, 3), Some(1.0));
        assert_eq!(hit_at_k(&ranked, &relevant, 10), Some(1.0));
        assert_eq!(hit_at_k(&ranked, &HashSet::new(), 3), None);
    }

    #[test]
    fn budget_recall_counts_whole_units_that_fit() {
        let relevant: HashSet<&str> = ["D1:3", "D2:5"].into_iter().collect();
        let units: Vec<(usize, &[&str])> =
            vec![(200, &["D1:3"]), (250, &["D1:1"]), (100, &["D2:5"])];
        assert_eq!(budget_recall(&units, &relevant, 199), Some(0.0));
        assert_eq!(budget_recall(&units, &relevant, 500), Some(0.5));
        assert_eq!(budget_recall(&units, &relevant, 550), Some(1.0));
    }
}
