//! Feature hashing: a model-free embedder for tests and engine-side benchmarks.

use std::hash::{Hash, Hasher};

use crate::error::Result;
use crate::pooling::l2_normalize;
use crate::Embedder;

/// Bag of lower-cased words (longer than two characters) hashed into `dim` buckets, then
/// L2-normalized: texts sharing words are close, and nothing is learned. Deterministic and
/// fast, so tests and benchmarks can measure memory systems without a model.
#[derive(Debug, Clone)]
pub struct HashingEmbedder {
    id: String,
    dim: usize,
}

impl HashingEmbedder {
    /// An embedder into `dim` buckets (at least 1).
    pub fn new(dim: usize) -> HashingEmbedder {
        let dim = dim.max(1);
        HashingEmbedder {
            id: format!("hashing-{dim}"),
            dim,
        }
    }
}

impl Embedder for HashingEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut vector = vec![0f32; self.dim];
                for word in text
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| w.chars().count() > 2)
                {
                    // SipHash with fixed keys: the same bucket on every run and machine.
                    let mut hasher = std::collections::hash_map::DefaultHasher::new();
                    word.to_lowercase().hash(&mut hasher);
                    vector[(hasher.finish() % self.dim as u64) as usize] += 1.0;
                }
                l2_normalize(&mut vector);
                vector
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_words_are_close_and_vectors_are_unit() {
        let embedder = HashingEmbedder::new(4096);
        let v = embedder
            .embed(&[
                "The greyhound races",
                "greyhound RACES today",
                "tax forms",
                "",
            ])
            .unwrap();
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!(dot(&v[0], &v[1]) > 0.5);
        assert!(dot(&v[0], &v[2]) < 0.1);
        assert_eq!(embedder.embed(&["The greyhound races"]).unwrap()[0], v[0]);
        assert_eq!(v[3].len(), 4096);
    }
}
