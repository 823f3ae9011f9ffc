//! Random vectors for tests and benchmarks of vector search: uniform unit vectors, and vectors
//! shaped like sentence embeddings.
//!
//! Sentence embeddings occupy a low-dimensional part of their space; uniformly random vectors
//! do not, and no graph index finds their neighbours cheaply (docs/benchmarks.md). A recall
//! test or benchmark therefore draws [`EmbeddingLike`] vectors: random points of a random
//! low-dimensional subspace plus isotropic noise. The engine's recall test and its benchmark
//! draw them here, so both measure the same distribution.

use rand::Rng;

/// Share of a sample that is isotropic noise rather than a point of the subspace.
const NOISE: f32 = 0.15;

/// A uniformly random unit vector of `dim` components.
pub fn unit<R: Rng + ?Sized>(rng: &mut R, dim: usize) -> Vec<f32> {
    normalized((0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect())
}

fn normalized(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

/// Random unit vectors near a random subspace, as sentence embeddings lie.
#[derive(Debug, Clone)]
pub struct EmbeddingLike {
    basis: Vec<Vec<f32>>,
}

impl EmbeddingLike {
    /// A random subspace of `rank` dimensions in a space of `dim`.
    pub fn new<R: Rng + ?Sized>(rng: &mut R, dim: usize, rank: usize) -> Self {
        EmbeddingLike {
            basis: (0..rank).map(|_| unit(rng, dim)).collect(),
        }
    }

    /// One unit vector: a random point of the subspace plus a little noise.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<f32> {
        let dim = self.basis.first().map_or(0, Vec::len);
        let mut v: Vec<f32> = unit(rng, dim).into_iter().map(|x| NOISE * x).collect();
        for b in &self.basis {
            let z: f32 = rng.random_range(-1.0..1.0);
            v.iter_mut().zip(b).for_each(|(x, y)| *x += z * y);
        }
        normalized(v)
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    use super::*;

    fn norm(v: &[f32]) -> f32 {
        v.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    /// The part of `v` outside the span of `basis`, by Gram-Schmidt.
    fn outside(v: &[f32], basis: &[Vec<f32>]) -> f32 {
        let mut ortho: Vec<Vec<f32>> = Vec::new();
        for b in basis {
            let mut u = b.clone();
            for o in &ortho {
                let dot: f32 = u.iter().zip(o).map(|(a, b)| a * b).sum();
                u.iter_mut().zip(o).for_each(|(x, y)| *x -= dot * y);
            }
            let n = norm(&u);
            ortho.push(u.into_iter().map(|x| x / n).collect());
        }
        let mut rest = v.to_vec();
        for o in &ortho {
            let dot: f32 = rest.iter().zip(o).map(|(a, b)| a * b).sum();
            rest.iter_mut().zip(o).for_each(|(x, y)| *x -= dot * y);
        }
        norm(&rest)
    }

    #[test]
    fn samples_are_unit_vectors_near_their_subspace_and_uniform_ones_are_not() {
        let mut rng = StdRng::seed_from_u64(1);
        let space = EmbeddingLike::new(&mut rng, 64, 4);
        let (mut near, mut uniform) = (0.0, 0.0);
        for _ in 0..50 {
            let v = space.sample(&mut rng);
            assert_eq!(v.len(), 64);
            assert!((norm(&v) - 1.0).abs() < 1e-4);
            near += outside(&v, &space.basis) / 50.0;
            let u = unit(&mut rng, 64);
            assert!((norm(&u) - 1.0).abs() < 1e-4);
            uniform += outside(&u, &space.basis) / 50.0;
        }
        // Noise of 0.15 against a subspace part of norm about 1.15; a uniform vector keeps
        // about sqrt(60/64) of itself outside four dimensions.
        assert!(near < 0.3, "{near}");
        assert!(uniform > 0.85, "{uniform}");
    }
}
