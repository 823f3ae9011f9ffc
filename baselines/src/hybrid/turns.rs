//! Turns as a finer grain beside the units: a round's vector is the normalized sum of its
//! turns', which blurs a reply that matches the question alone. Every unit also stores the
//! vector of its first turn in a space of its own ([`space`]); as rounds overlap, that covers
//! every turn of a conversation but its last. A question ranks those turns by similarity,
//! and a unit gains `turn_weight` times the best normalized score among the turns it holds.

use std::collections::HashMap;

use mb_engine::{Engine, Hit};

use crate::error::MemoryError;
use crate::store::record_turns;

/// The space of the units' first-turn vectors, for the embedder whose space is `units`.
pub fn space(units: &str) -> String {
    format!("{units}#turn")
}

/// The turns ranked for `vector` in the memory `namespace`: each ranked unit's first turn with
/// its min-max normalized similarity (the best 1), and the hits themselves, so that a unit
/// found only through a turn joins the candidates.
pub fn scores(
    engine: &Engine,
    namespace: &str,
    units_space: &str,
    vector: &[f32],
    n: usize,
) -> Result<(HashMap<String, f32>, Vec<Hit>), MemoryError> {
    let hits = engine.search_vector(namespace, &space(units_space), vector, n)?;
    let (low, high) = hits.iter().fold((f32::MAX, f32::MIN), |(lo, hi), h| {
        (lo.min(h.score), hi.max(h.score))
    });
    let span = high - low;
    let mut scores = HashMap::new();
    for hit in &hits {
        let Some(first) = record_turns(&hit.record).into_iter().next() else {
            continue;
        };
        let normal = if span > 0.0 {
            (hit.score - low) / span
        } else {
            1.0
        };
        scores.insert(first, normal);
    }
    Ok((scores, hits))
}

/// The best of `scores` among the turns of the unit `hit`, 0 when none is ranked.
pub fn best(scores: &HashMap<String, f32>, hit: &Hit) -> f32 {
    record_turns(&hit.record)
        .iter()
        .filter_map(|turn| scores.get(turn))
        .fold(0.0, |best, s| best.max(*s))
}
