//! Pseudo-relevance feedback on the embedding side (Rocchio): the question's vector moved
//! towards the vectors of the units the first fused ranking put on top, then searched again.
//!
//! A question and its answer are often worded apart ("What did Caroline research?" against
//! a turn about adoption agencies); the best first hits usually share the answer's topic, so
//! their mean pulls the query towards it. Off by default (`feedback_units = 0`); the measured
//! effect is in docs/memory-systems.md.

use mb_engine::{Engine, Hit};

use crate::error::MemoryError;

/// `query` moved towards the mean of `vectors` by `weight` (0 leaves it where it is; 1 weighs
/// the mean as much as the query), normalized; `query` itself when there is nothing to move
/// towards.
pub fn expand(query: &[f32], vectors: &[Vec<f32>], weight: f32) -> Vec<f32> {
    let usable: Vec<&Vec<f32>> = vectors.iter().filter(|v| v.len() == query.len()).collect();
    if usable.is_empty() || weight == 0.0 {
        return query.to_vec();
    }
    let share = weight / usable.len() as f32;
    let mut moved = query.to_vec();
    for vector in usable {
        for (m, v) in moved.iter_mut().zip(vector) {
            *m += share * v;
        }
    }
    let norm = moved.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        moved.iter_mut().for_each(|x| *x /= norm);
    }
    moved
}

/// The stored vectors in `space` of the first `n` of `hits` (in the namespace `ns`).
pub fn vectors_of(
    engine: &Engine,
    ns: &str,
    space: &str,
    hits: &[Hit],
    n: usize,
) -> Result<Vec<Vec<f32>>, MemoryError> {
    let mut vectors = Vec::with_capacity(n);
    for hit in hits.iter().take(n) {
        let found = engine
            .get_vectors(ns, hit.record.id)?
            .into_iter()
            .find(|(name, _)| name == space);
        if let Some((_, vector)) = found {
            vectors.push(vector);
        }
    }
    Ok(vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_moves_towards_the_feedback_and_stays_a_unit_vector() {
        let query = [1.0, 0.0];
        let moved = expand(&query, &[vec![0.0, 1.0], vec![0.0, 1.0]], 1.0);
        let expected = std::f32::consts::FRAC_1_SQRT_2;
        assert!((moved[0] - expected).abs() < 1e-6 && (moved[1] - expected).abs() < 1e-6);
        assert_eq!(expand(&query, &[vec![0.0, 1.0]], 0.0), query);
        assert_eq!(expand(&query, &[], 1.0), query);
        // A vector of another dimension is left out.
        assert_eq!(expand(&query, &[vec![0.0, 1.0, 0.0]], 1.0), query);
    }
}
