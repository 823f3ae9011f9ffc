//! Search results and hybrid (lexical + vector) fusion.

use std::collections::HashMap;

use crate::record::{Record, RecordId};

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The matching record.
    pub record: Record,
    /// Score: BM25 for lexical search, cosine similarity for vector search, the reciprocal
    /// rank fusion score for hybrid search. Higher is better.
    pub score: f32,
}

/// A hybrid query: BM25 over `text` and cosine similarity to `vector`, fused by reciprocal
/// rank fusion (RRF): `score(d) = Σ 1 / (rrf_k + rank_i(d))` over the lists where `d` appears,
/// ranks starting at 1.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridQuery {
    /// Text for the lexical side.
    pub text: String,
    /// Embedding space of `vector`.
    pub space: String,
    /// Query embedding.
    pub vector: Vec<f32>,
    /// Number of results.
    pub k: usize,
    /// How many candidates each side contributes before fusion (default `max(50, k)`).
    pub candidates: Option<usize>,
    /// RRF constant (default 60, as in Cormack et al. 2009).
    pub rrf_k: f32,
}

impl HybridQuery {
    /// A hybrid query with the default fusion parameters.
    pub fn new(
        text: impl Into<String>,
        space: impl Into<String>,
        vector: Vec<f32>,
        k: usize,
    ) -> Self {
        HybridQuery {
            text: text.into(),
            space: space.into(),
            vector,
            k,
            candidates: None,
            rrf_k: 60.0,
        }
    }

    pub(crate) fn candidates(&self) -> usize {
        self.candidates.unwrap_or(self.k.max(50))
    }
}

/// Reciprocal rank fusion of ranked id lists (best first). Ties rank the older record first.
pub(crate) fn reciprocal_rank_fusion(
    lists: &[Vec<RecordId>],
    rrf_k: f32,
    k: usize,
) -> Vec<(RecordId, f32)> {
    let mut scores: HashMap<RecordId, f32> = HashMap::new();
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            *scores.entry(*id).or_default() += 1.0 / (rrf_k + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(RecordId, f32)> = scores.into_iter().collect();
    fused.sort_by(crate::vector::distance::rank);
    fused.truncate(k);
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_rewards_agreement() {
        let a = vec![RecordId(1), RecordId(2), RecordId(3)];
        let b = vec![RecordId(3), RecordId(2), RecordId(9)];
        let fused = reciprocal_rank_fusion(&[a, b], 60.0, 10);
        // 3 is 3rd + 1st (1/63 + 1/61), just above 2 at 2nd + 2nd (2/62); 1 and 9 trail.
        assert_eq!(fused[0].0, RecordId(3));
        assert_eq!(fused[1].0, RecordId(2));
        assert!((fused[0].1 - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-6);
        assert_eq!(fused[2].0, RecordId(1));
        assert_eq!(fused.len(), 4);
        assert_eq!(reciprocal_rank_fusion(&[], 60.0, 3), vec![]);
    }
}
