//! RAPTOR's clustering (upstream's vendored `baselines/raptor/raptor/cluster_utils.py`):
//! embeddings reduced with UMAP, then grouped by Gaussian mixtures whose number of components
//! is chosen by BIC, each point joining every cluster whose probability passes a threshold.
//! scikit-learn's estimators are ported to be reproduced point for point ([`kmeans`], [`gmm`]).

pub mod gmm;
mod kmeans;
pub mod layers;
pub mod umap;

pub use gmm::{GaussianMixture, GmmError, GmmParams};

/// The seed upstream gives the mixtures that choose the number of clusters (`RANDOM_SEED`).
pub const SELECTION_SEED: u32 = 224;
/// The covariance regularization of those mixtures.
pub const SELECTION_REG_COVAR: f64 = 1e-4;
/// scikit-learn's default regularization, which the final mixture keeps.
pub const DEFAULT_REG_COVAR: f64 = 1e-6;
/// Most clusters upstream considers (`max_clusters`).
pub const MAX_CLUSTERS: usize = 50;

/// The number of clusters with the lowest BIC among 1 to `min(max_clusters, n) − 1` (upstream's
/// `get_optimal_clusters`; a mixture that cannot be fitted scores +∞, the first of equal scores
/// wins, and 1 when nothing can be tried).
pub fn optimal_clusters(points: &[Vec<f64>], max_clusters: usize) -> usize {
    let mut best = (f64::INFINITY, 1);
    for components in 1..max_clusters.min(points.len()) {
        let params = GmmParams {
            components,
            seed: SELECTION_SEED,
            reg_covar: SELECTION_REG_COVAR,
        };
        let bic = GaussianMixture::fit(points, params)
            .map(|m| m.bic(points))
            .unwrap_or(f64::INFINITY);
        if bic < best.0 {
            best = (bic, components);
        }
    }
    best.1
}

/// Each point's clusters: those whose probability exceeds `threshold` under the mixture of
/// [`optimal_clusters`] components (seed 0, default regularization), and that number (upstream's
/// `GMM_cluster`; one cluster holding every point when the mixture cannot be fitted).
pub fn gmm_cluster(points: &[Vec<f64>], threshold: f64) -> (Vec<Vec<usize>>, usize) {
    let components = optimal_clusters(points, MAX_CLUSTERS);
    let params = GmmParams {
        components,
        seed: 0,
        reg_covar: DEFAULT_REG_COVAR,
    };
    match GaussianMixture::fit(points, params) {
        Ok(mixture) => {
            let labels = mixture
                .predict_proba(points)
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .enumerate()
                        .filter(|&(_, p)| p > threshold)
                        .map(|(c, _)| c)
                        .collect()
                })
                .collect();
            (labels, components)
        }
        Err(_) => (vec![vec![0]; points.len()], 1),
    }
}
