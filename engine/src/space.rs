//! Embedding spaces: a model's vectors of one dimension.

use serde::{Deserialize, Serialize};

use crate::codec;
use crate::error::{Error, Result};
use crate::keys::{space_key, CF_META};
use crate::state::Inner;

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

impl Inner {
    /// Declares an embedding space (see [`crate::Engine::create_space`]).
    pub(crate) fn create_space(&self, space: Space) -> Result<Space> {
        let invalid = |reason| Error::InvalidSpace {
            space: space.name.clone(),
            reason,
        };
        if space.name.is_empty() {
            return Err(invalid("empty name"));
        }
        if space.dim == 0 {
            return Err(invalid("dimension 0"));
        }
        let mut catalog = self.catalog.write();
        if let Some(existing) = catalog.spaces.get(&space.name) {
            if existing.dim != space.dim {
                return Err(Error::SpaceConflict {
                    space: space.name,
                    existing: existing.dim,
                    requested: space.dim,
                });
            }
            return Ok(existing.clone());
        }
        let store = &self.store;
        let mut batch = rocksdb::WriteBatch::default();
        batch.put_cf(
            store.cf(CF_META)?,
            space_key(&space.name),
            codec::encode("space", &space)?,
        );
        store.write(batch)?;
        catalog.spaces.insert(space.name.clone(), space.clone());
        Ok(space)
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
