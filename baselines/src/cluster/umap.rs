//! UMAP dimension reduction as umap-learn 0.5 runs it on small inputs, for RAPTOR's clustering.
//!
//! RAPTOR (upstream's vendored `raptor/cluster_utils.py`) reduces embeddings with
//! `umap.UMAP(n_neighbors=…, n_components=dim, metric="cosine")` before fitting Gaussian
//! mixtures. On fewer than 4096 points umap-learn:
//!
//! 1. finds each point's nearest neighbours exactly, by cosine distance, the point itself first;
//! 2. turns them into a fuzzy graph: per point, the distance `rho` to its nearest neighbour and a
//!    scale `sigma` making the memberships sum to log2(k) (`smooth_knn_dist`), then the fuzzy
//!    union of the graph with its transpose;
//! 3. fits the low-dimensional similarity `1 / (1 + a·d^(2b))` to `min_dist` and `spread`;
//! 4. starts from a spectral layout of the graph (module `spectral`, solved by module `eigen`),
//!    scaled so its largest coordinate is 10, jittered, then rescaled to [0, 10] per axis;
//! 5. moves the points by stochastic gradient descent over sampled edges with negative sampling
//!    (`optimize_layout_euclidean`, module `layout`).
//!
//! Steps 1–2 are in module `graph`. Distances cost O(n²·d) and the dense eigensolver O(n³):
//! about 2 s at n = 1000 and 12 s at n = 3000 (d = 1024, 10 dimensions), half of it the
//! optimisation.
//!
//! All of it runs single-threaded from one seeded generator, so a seed always gives the same
//! layout — as umap-learn does when given a `random_state`. RAPTOR gives none, so upstream's
//! layouts vary from run to run; only their distribution can be matched, not their values.

use graph::{fuzzy_simplicial_set, nearest_neighbors, Graph};
use layout::{find_ab_params, optimize_layout, sampled_edges, Layout};
use thiserror::Error;

mod eigen;
mod graph;
mod layout;
mod spectral;
#[cfg(test)]
mod tests;

/// Largest absolute coordinate of the scaled initial layout (`noisy_scale_coords`' `max_coord`).
const INIT_MAX_COORD: f64 = 10.0;
/// Standard deviation of the jitter added to the initial layout.
const INIT_NOISE: f64 = 1e-4;

/// Settings of a UMAP reduction (umap-learn's defaults where upstream leaves them).
///
/// Upstream sets only `n_neighbors` and `n_components`; the rest are umap-learn's defaults, kept
/// as fields so that tests and experiments can vary them.
#[derive(Debug, Clone, PartialEq)]
pub struct UmapParams {
    /// Size of the neighbourhood each point sees (at least 2; on `n` points umap-learn uses
    /// `min(n_neighbors, n − 1)`, and so does this port).
    pub n_neighbors: usize,
    /// Dimensions of the reduced points (at least 1).
    pub n_components: usize,
    /// Smallest distance between points in the layout (umap-learn's default 0.1).
    pub min_dist: f64,
    /// Scale of the layout's distances, at least `min_dist` (default 1.0).
    pub spread: f64,
    /// Epochs of the layout optimisation; `None` is umap-learn's choice: 500 up to 10 000
    /// points, 200 beyond.
    pub n_epochs: Option<usize>,
    /// Negative samples per positive sample (default 5).
    pub negative_sample_rate: usize,
    /// Initial step size, decreasing linearly to 0 over the epochs (default 1.0).
    pub learning_rate: f64,
    /// Seed of every random draw: the same seed, the same layout.
    pub seed: u64,
}

impl UmapParams {
    /// umap-learn's settings for `n_neighbors` and `n_components`, seed 0.
    pub fn new(n_neighbors: usize, n_components: usize) -> Self {
        Self {
            n_neighbors,
            n_components,
            min_dist: 0.1,
            spread: 1.0,
            n_epochs: None,
            negative_sample_rate: 5,
            learning_rate: 1.0,
            seed: 0,
        }
    }
}

/// Why points cannot be reduced (umap-learn raises on the same inputs).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum UmapError {
    /// A row's length differs from the first row's.
    #[error("row {row} has {found} values where row 0 has {expected}")]
    RaggedRows {
        /// The row.
        row: usize,
        /// The first row's length.
        expected: usize,
        /// This row's length.
        found: usize,
    },
    /// A row holds NaN or an infinity.
    #[error("row {row} holds a value that is not finite")]
    NonFinite {
        /// The row.
        row: usize,
    },
    /// The spectral layout needs more points than `n_components + 1` (umap-learn's eigensolver
    /// fails below that; RAPTOR never asks, reducing to at most `n − 2` dimensions).
    #[error("{points} points cannot be reduced to {n_components} dimensions (more than {} needed)", n_components.saturating_add(1))]
    TooFewPoints {
        /// The points given.
        points: usize,
        /// The dimensions asked for.
        n_components: usize,
    },
    /// A setting outside what umap-learn accepts.
    #[error("invalid UMAP setting: {0}")]
    InvalidParameter(&'static str),
}

/// Reduces `points` (rows, all the same length) to `n_components` dimensions with cosine distances.
///
/// Returns one row of `n_components` coordinates per point, in the input's order. A zero vector
/// is at cosine distance 1 from every other vector (0 from another zero vector), as in
/// umap-learn's `cosine`.
///
/// # Errors
///
/// [`UmapError`] for rows of different lengths or with non-finite values, for `n_components + 1`
/// points or fewer, and for settings umap-learn refuses.
pub fn reduce(points: &[Vec<f32>], params: &UmapParams) -> Result<Vec<Vec<f64>>, UmapError> {
    check_input(points, params)?;
    let n_neighbors = params.n_neighbors.min(points.len() - 1);
    let (indices, distances) = nearest_neighbors(points, n_neighbors);
    let graph = fuzzy_simplicial_set(&indices, &distances);
    let curve = find_ab_params(params.spread, params.min_dist);
    let mut rng = Rng::new(params.seed);
    let embedding = embed_graph(points, graph, params, curve, &mut rng);
    Ok(embedding
        .chunks(params.n_components)
        .map(<[f64]>::to_vec)
        .collect())
}

/// Refuses the settings and inputs umap-learn refuses, before any work.
fn check_input(points: &[Vec<f32>], params: &UmapParams) -> Result<(), UmapError> {
    use UmapError::InvalidParameter;
    if params.n_neighbors < 2 {
        return Err(InvalidParameter("n_neighbors must be at least 2"));
    }
    if params.n_components == 0 {
        return Err(InvalidParameter("n_components must be at least 1"));
    }
    if !(params.spread > 0.0 && params.spread.is_finite()) {
        return Err(InvalidParameter("spread must be positive and finite"));
    }
    if !(params.min_dist >= 0.0 && params.min_dist <= params.spread) {
        return Err(InvalidParameter("min_dist must lie between 0 and spread"));
    }
    if !(params.learning_rate >= 0.0 && params.learning_rate.is_finite()) {
        return Err(InvalidParameter(
            "learning_rate must be non-negative and finite",
        ));
    }
    let expected = points.first().map_or(0, Vec::len);
    for (row, point) in points.iter().enumerate() {
        if point.len() != expected {
            let found = point.len();
            return Err(UmapError::RaggedRows {
                row,
                expected,
                found,
            });
        }
        if !point.iter().all(|x| x.is_finite()) {
            return Err(UmapError::NonFinite { row });
        }
    }
    if points.len() <= params.n_components.saturating_add(1) {
        let (points, n_components) = (points.len(), params.n_components);
        return Err(UmapError::TooFewPoints {
            points,
            n_components,
        });
    }
    Ok(())
}

/// umap-learn's `simplicial_set_embedding` for Euclidean output: prunes edges too weak to be
/// sampled, lays the graph out spectrally, scales and jitters it, rescales each axis to
/// [0, 10] and optimises. Returns the layout row-major, `n_components` per point.
fn embed_graph(
    points: &[Vec<f32>],
    mut graph: Graph,
    params: &UmapParams,
    (a, b): (f64, f64),
    rng: &mut Rng,
) -> Vec<f64> {
    let default_epochs = if points.len() <= 10_000 { 500 } else { 200 };
    let n_epochs = params.n_epochs.unwrap_or(default_epochs);
    let max_weight = graph.iter().flatten().map(|&(_, w)| w).fold(0.0, f64::max);
    // Edges too weak to be sampled once go; with 10 epochs or fewer, by the default's measure.
    let sampled_epochs = if n_epochs > 10 {
        n_epochs
    } else {
        default_epochs
    };
    let floor = max_weight / sampled_epochs as f64;
    for row in &mut graph {
        row.retain(|&(_, w)| w >= floor);
    }
    let dim = params.n_components;
    let mut embedding = spectral::spectral_layout(points, &graph, dim, rng);
    let largest = embedding.iter().fold(0.0, |m: f64, x| m.max(x.abs()));
    // umap-learn would divide by zero here; a layout of zeros (never seen) is left unscaled.
    let expansion = if largest > 0.0 {
        INIT_MAX_COORD / largest
    } else {
        1.0
    };
    for x in &mut embedding {
        *x = *x * expansion + INIT_NOISE * rng.normal();
    }
    rescale_axes(&mut embedding, dim);
    let edges = sampled_edges(&graph, max_weight, n_epochs);
    let layout = Layout {
        dim,
        n_epochs,
        a,
        b,
        negative_sample_rate: params.negative_sample_rate as f64,
        initial_alpha: params.learning_rate,
    };
    optimize_layout(&mut embedding, &edges, &layout, rng);
    embedding
}

/// Maps each axis of a row-major layout onto [0, 10], as umap-learn does before optimising (an
/// axis where all points agree, which umap-learn would turn into NaN, is set to 0).
fn rescale_axes(embedding: &mut [f64], dim: usize) {
    for axis in 0..dim {
        let values = || embedding.iter().skip(axis).step_by(dim);
        let min = values().fold(f64::INFINITY, |m, &x| m.min(x));
        let range = values().fold(f64::NEG_INFINITY, |m, &x| m.max(x)) - min;
        for x in embedding.iter_mut().skip(axis).step_by(dim) {
            *x = if range > 0.0 {
                10.0 * (*x - min) / range
            } else {
                0.0
            };
        }
    }
}

/// SplitMix64: a small seeded generator, so that a seed fixes every draw of a reduction.
/// (umap-learn draws from numpy's Mersenne Twister and a Tausworthe generator per vertex; their
/// streams cannot be matched without a seed upstream does not give.)
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let radius = (-2.0 * (1.0 - self.uniform(0.0, 1.0)).ln()).sqrt();
        radius * (std::f64::consts::TAU * self.uniform(0.0, 1.0)).cos()
    }

    /// Uniform in 0..n (n > 0), by remainder like umap-learn's `tau_rand_int() % n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}
