//! Ranking for the hybrid memory: weighted reciprocal rank fusion of the BM25 and embedding
//! rankings, a bonus for units dated when the question says, and repeated texts collapsed.

use std::collections::{HashMap, HashSet};

use mb_core::dates::{Day, DayRange};
use mb_engine::{Engine, Hit, RecordId};

use super::settings::{Fusion, HybridSettings};
use crate::error::MemoryError;

/// The BM25 ranking of `words` and the embedding ranking of `query` (a space and a vector) in
/// `namespace`, `n` candidates each, fused as `settings` say: what the units and the sessions
/// are both ranked by. A ranking whose weight is 0 is not searched.
pub fn search(
    engine: &Engine,
    namespace: &str,
    words: &str,
    query: Option<(&str, &[f32])>,
    n: usize,
    settings: &HybridSettings,
) -> Result<Vec<Hit>, MemoryError> {
    let mut rankings = Vec::new();
    if settings.lexical_weight > 0.0 {
        rankings.push((
            settings.lexical_weight,
            engine.search_text(namespace, words, n)?,
        ));
    }
    if let Some((space, vector)) = query.filter(|_| settings.dense_weight > 0.0) {
        let hits = engine.search_vector(namespace, space, vector, n)?;
        rankings.push((settings.dense_weight, hits));
    }
    Ok(match settings.fusion {
        Fusion::Rrf => fuse(rankings, settings.rrf_k),
        Fusion::Scores => combine_scores(rankings),
    })
}

/// Fuses rankings (each with its weight, best first): `score(d) = Σ w / (rrf_k + rank)`, ranks
/// from 1. Ties rank the older record first.
pub fn fuse(rankings: Vec<(f32, Vec<Hit>)>, rrf_k: f32) -> Vec<Hit> {
    let mut fused: HashMap<RecordId, Hit> = HashMap::new();
    for (weight, hits) in rankings {
        for (rank, hit) in hits.into_iter().enumerate() {
            let share = weight / (rrf_k + rank as f32 + 1.0);
            fused
                .entry(hit.record.id)
                .and_modify(|h| h.score += share)
                .or_insert(Hit {
                    score: share,
                    ..hit
                });
        }
    }
    let mut out: Vec<Hit> = fused.into_values().collect();
    sort(&mut out);
    out
}

/// Fuses rankings by their scores: each ranking's scores min-max normalized over its
/// candidates, weighted and summed (a record missing from a ranking gets 0 there).
pub fn combine_scores(rankings: Vec<(f32, Vec<Hit>)>) -> Vec<Hit> {
    let mut fused: HashMap<RecordId, Hit> = HashMap::new();
    for (weight, hits) in rankings {
        let (low, high) = hits.iter().fold((f32::MAX, f32::MIN), |(lo, hi), h| {
            (lo.min(h.score), hi.max(h.score))
        });
        let span = high - low;
        for hit in hits {
            let normal = if span > 0.0 {
                (hit.score - low) / span
            } else {
                1.0
            };
            let share = weight * normal;
            fused
                .entry(hit.record.id)
                .and_modify(|h| h.score += share)
                .or_insert(Hit {
                    score: share,
                    ..hit
                });
        }
    }
    let mut out: Vec<Hit> = fused.into_values().collect();
    sort(&mut out);
    out
}

fn sort(hits: &mut [Hit]) {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.record.id.cmp(&b.record.id))
    });
}

/// Adds `bonus` to the score of every hit dated within `range` and ranks again.
pub fn favour_days(
    hits: &mut [Hit],
    range: DayRange,
    bonus: f32,
    day: impl Fn(&Hit) -> Option<Day>,
) {
    for hit in hits.iter_mut() {
        if day(hit).is_some_and(|d| range.contains(d)) {
            hit.score += bonus;
        }
    }
    sort(hits);
}

/// Adds `bonus(hit)` to every hit's score and ranks again.
pub fn boost(hits: &mut [Hit], bonus: impl Fn(&Hit) -> f32) {
    for hit in hits.iter_mut() {
        hit.score += bonus(hit);
    }
    sort(hits);
}

/// Keeps the first of hits whose `text` is the same up to case, punctuation and spacing.
pub fn dedupe(hits: Vec<Hit>, text: impl Fn(&Hit) -> &str) -> Vec<Hit> {
    let mut seen = HashSet::new();
    hits.into_iter()
        .filter(|hit| {
            let normal: String = text(hit)
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
                .join(" ");
            seen.insert(normal)
        })
        .collect()
}

/// Reorders the first `scores.len()` hits by `scores` (a reranker's, one per hit, higher is
/// better) mixed with their fused scores: each side min-max normalized over those hits, the
/// reranker's weighted `blend` and the fused `1 - blend` (1 orders by the reranker alone; ties
/// keep the fused order). The rest stay after them as they were, and the hits' own scores
/// are left as fused.
pub fn reorder_head(hits: &mut [Hit], scores: &[f32], blend: f32) {
    let n = scores.len().min(hits.len());
    let fused: Vec<f32> = hits[..n].iter().map(|h| h.score).collect();
    let (reranked, fused) = (min_max(&scores[..n]), min_max(&fused));
    let key: Vec<f32> = (0..n)
        .map(|i| blend * reranked[i] + (1.0 - blend) * fused[i])
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| key[b].total_cmp(&key[a]).then(a.cmp(&b)));
    let head: Vec<Hit> = order.iter().map(|&i| hits[i].clone()).collect();
    for (slot, hit) in hits.iter_mut().zip(head) {
        *slot = hit;
    }
}

/// `values` scaled to 0..=1 (all 1 when they are equal).
fn min_max(values: &[f32]) -> Vec<f32> {
    let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    values
        .iter()
        .map(|v| if hi > lo { (v - lo) / (hi - lo) } else { 1.0 })
        .collect()
}

#[cfg(test)]
mod tests {
    use mb_engine::Record;

    use super::*;

    fn hit(id: u64, text: &str) -> Hit {
        Hit {
            record: Record {
                id: RecordId(id),
                text: text.into(),
                body: None,
                attributes: Default::default(),
                created_at_ms: 0,
                seq: id,
            },
            score: 0.0,
        }
    }

    #[test]
    fn weighted_fusion_rewards_agreement() {
        let lexical = vec![hit(1, "a"), hit(2, "b"), hit(3, "c")];
        let dense = vec![hit(3, "c"), hit(2, "b"), hit(9, "z")];
        let fused = fuse(vec![(1.0, lexical.clone()), (1.0, dense.clone())], 60.0);
        let ids: Vec<u64> = fused.iter().map(|h| h.record.id.0).collect();
        assert_eq!(ids, [3, 2, 1, 9]);
        assert!((fused[0].score - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-6);
        // A heavier lexical side puts its first first (with a small constant, where ranks
        // weigh most).
        let fused = fuse(vec![(3.0, lexical), (1.0, dense)], 1.0);
        assert_eq!(fused[0].record.id.0, 1);
    }

    #[test]
    fn dated_hits_rise_and_repeats_go() {
        let mut hits = fuse(
            vec![(1.0, vec![hit(1, "Hi!"), hit(2, "hi"), hit(3, "x")])],
            60.0,
        );
        let range = DayRange {
            first: Day(10),
            last: Day(12),
        };
        favour_days(&mut hits, range, 1.0, |h| {
            (h.record.id.0 == 3).then_some(Day(11))
        });
        assert_eq!(hits[0].record.id.0, 3);
        let kept = dedupe(hits, |h| h.record.text.as_str());
        let ids: Vec<u64> = kept.iter().map(|h| h.record.id.0).collect();
        assert_eq!(ids, [3, 1]);
    }

    #[test]
    fn a_reranked_head_keeps_the_tail() {
        let mut hits: Vec<Hit> = (1..=5).map(|id| hit(id, "t")).collect();
        reorder_head(&mut hits, &[0.1, 2.0, 0.1, -1.0], 1.0);
        let ids: Vec<u64> = hits.iter().map(|h| h.record.id.0).collect();
        assert_eq!(
            ids,
            [2, 1, 3, 4, 5],
            "ties keep their order; the fifth was not scored"
        );
    }
}
