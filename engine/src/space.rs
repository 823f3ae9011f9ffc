//! Embedding spaces: a model's vectors of one dimension.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Largest accepted dimension of a space: 16 times the largest embedding models' (4 096), and
/// no longer than the VNNI scan kernel's longest query (`vector/kernel.rs` asserts it).
pub const MAX_DIM: usize = 1 << 16;

/// Longest accepted space name, in bytes (the name is part of every vector's key).
pub const MAX_SPACE_NAME: usize = 256;

/// An embedding space: vectors produced by one model, all of one dimension. Vectors from
/// different spaces are never compared with each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Space {
    /// Name, conventionally the model id (e.g. `all-MiniLM-L6-v2`).
    pub name: String,
    /// Number of components of every vector.
    pub dim: usize,
}

impl Space {
    /// A space with this name and dimension.
    pub fn new(name: impl Into<String>, dim: usize) -> Self {
        Space {
            name: name.into(),
            dim,
        }
    }

    /// Checks a vector against the space and returns it L2-normalized (search is cosine).
    /// A zero vector stays zero: it matches nothing and everything equally.
    pub(crate) fn normalize(&self, vector: &[f32]) -> Result<Vec<f32>> {
        if vector.len() != self.dim {
            return Err(Error::DimensionMismatch {
                space: self.name.clone(),
                expected: self.dim,
                got: vector.len(),
            });
        }
        if let Some(index) = vector.iter().position(|x| !x.is_finite()) {
            return Err(Error::NonFiniteVector {
                space: self.name.clone(),
                index,
            });
        }
        let norm = vector
            .iter()
            .map(|x| f64::from(*x).powi(2))
            .sum::<f64>()
            .sqrt();
        if norm == 0.0 {
            return Ok(vector.to_vec());
        }
        Ok(vector
            .iter()
            .map(|x| (f64::from(*x) / norm) as f32)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_and_rejects() {
        let s = Space::new("m", 2);
        let v = s.normalize(&[3.0, 4.0]).unwrap();
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert!(matches!(
            s.normalize(&[1.0]),
            Err(Error::DimensionMismatch {
                expected: 2,
                got: 1,
                ..
            })
        ));
        assert!(matches!(
            s.normalize(&[1.0, f32::NAN]),
            Err(Error::NonFiniteVector { index: 1, .. })
        ));
        assert_eq!(s.normalize(&[0.0, 0.0]).unwrap(), vec![0.0, 0.0]);
    }
}
