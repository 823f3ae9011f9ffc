//! scikit-learn's `GaussianMixture` with full covariances, as RAPTOR's clustering uses it
//! (vendored `raptor/cluster_utils.py`): started from k-means labels
//! ([`super::kmeans`]), fitted by EM until the mean log-likelihood gains less than 1e-3 (at most
//! 100 iterations), scored by BIC to choose the number of clusters, and read as the
//! probability of each cluster for each point.

use super::kmeans::{dot, kmeans_labels};

/// EM iterations at most (scikit-learn's `max_iter`).
const MAX_ITER: usize = 100;
/// Convergence threshold on the mean log-likelihood (scikit-learn's `tol`).
const TOL: f64 = 1e-3;
/// What scikit-learn adds to cluster weights so that none is zero (`10 * eps`).
const WEIGHT_FLOOR: f64 = 10.0 * f64::EPSILON;

/// Why a mixture cannot be fitted.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GmmError {
    /// Fewer points than components, or none.
    #[error("{points} points cannot hold {components} mixture components")]
    TooFewPoints {
        /// The points.
        points: usize,
        /// The components asked for.
        components: usize,
    },
    /// A component's covariance is not positive definite (scikit-learn's "ill-defined
    /// empirical covariance"; raise `reg_covar`).
    #[error("a mixture component has an ill-defined covariance (not positive definite)")]
    IllDefinedCovariance,
}

/// Settings of a fit: scikit-learn's `n_components`, `random_state` and `reg_covar`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GmmParams {
    /// The number of components.
    pub components: usize,
    /// The seed of the k-means start (numpy's `RandomState`).
    pub seed: u32,
    /// What is added to each covariance's diagonal.
    pub reg_covar: f64,
}

/// A fitted mixture of full-covariance Gaussians.
#[derive(Debug, Clone)]
pub struct GaussianMixture {
    weights: Vec<f64>,
    means: Vec<Vec<f64>>,
    /// Per component, the upper-triangular `U` with `U Uᵀ` the precision matrix, row-major.
    precision_cholesky: Vec<Vec<f64>>,
    dim: usize,
}

impl GaussianMixture {
    /// Fits a mixture to `points` as `GaussianMixture(...).fit(points)` does.
    pub fn fit(points: &[Vec<f64>], params: GmmParams) -> Result<GaussianMixture, GmmError> {
        let n = points.len();
        if n == 0 || params.components == 0 || n < params.components {
            return Err(GmmError::TooFewPoints {
                points: n,
                components: params.components,
            });
        }
        let labels = kmeans_labels(points, params.components, params.seed);
        let mut resp = vec![vec![0.0; params.components]; n];
        for (row, &label) in resp.iter_mut().zip(&labels) {
            row[label] = 1.0;
        }
        let mut mixture = m_step(points, &resp, params.reg_covar)?;
        let mut lower_bound = f64::NEG_INFINITY;
        for _ in 0..MAX_ITER {
            let previous = lower_bound;
            let (mean_log_likelihood, log_resp) = mixture.e_step(points);
            let resp: Vec<Vec<f64>> = log_resp
                .iter()
                .map(|row| row.iter().map(|v| v.exp()).collect())
                .collect();
            mixture = m_step(points, &resp, params.reg_covar)?;
            lower_bound = mean_log_likelihood;
            if (lower_bound - previous).abs() < TOL {
                break;
            }
        }
        Ok(mixture)
    }

    /// The probability of each component for each point (`predict_proba`).
    pub fn predict_proba(&self, points: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let (_, log_resp) = self.e_step(points);
        log_resp
            .into_iter()
            .map(|row| row.into_iter().map(f64::exp).collect())
            .collect()
    }

    /// The Bayesian information criterion on `points` (lower is better): `−2 n ℓ̄ + p ln n`.
    pub fn bic(&self, points: &[Vec<f64>]) -> f64 {
        let n = points.len() as f64;
        let (mean_log_likelihood, _) = self.e_step(points);
        let (k, d) = (self.weights.len() as f64, self.dim as f64);
        let parameters = k * d * (d + 1.0) / 2.0 + k * d + k - 1.0;
        -2.0 * mean_log_likelihood * n + parameters * n.ln()
    }

    /// The mean log-likelihood and each point's log-responsibilities.
    fn e_step(&self, points: &[Vec<f64>]) -> (f64, Vec<Vec<f64>>) {
        let mut total = 0.0;
        let log_resp = points
            .iter()
            .map(|x| {
                let weighted: Vec<f64> = (0..self.weights.len())
                    .map(|c| self.log_gaussian(x, c) + self.weights[c].ln())
                    .collect();
                let norm = log_sum_exp(&weighted);
                total += norm;
                weighted.into_iter().map(|w| w - norm).collect()
            })
            .collect();
        (total / points.len().max(1) as f64, log_resp)
    }

    /// The log-density of component `c` at `x`.
    fn log_gaussian(&self, x: &[f64], c: usize) -> f64 {
        let d = self.dim;
        let u = &self.precision_cholesky[c];
        let mean = &self.means[c];
        let mut log_det = 0.0;
        let mut squared = 0.0;
        // y = (x − μ)ᵀ U, U upper triangular (column j uses rows 0..=j).
        for j in 0..d {
            log_det += u[j * d + j].ln();
            let y: f64 = (0..=j).map(|i| (x[i] - mean[i]) * u[i * d + j]).sum();
            squared += y * y;
        }
        -0.5 * (d as f64 * (2.0 * std::f64::consts::PI).ln() + squared) + log_det
    }
}

/// The mixture's parameters from responsibilities (scikit-learn's `_m_step`).
fn m_step(
    points: &[Vec<f64>],
    resp: &[Vec<f64>],
    reg_covar: f64,
) -> Result<GaussianMixture, GmmError> {
    let n = points.len();
    let d = points.first().map_or(0, Vec::len);
    let k = resp.first().map_or(0, Vec::len);
    let mut weights = Vec::with_capacity(k);
    let mut means = Vec::with_capacity(k);
    let mut precision_cholesky = Vec::with_capacity(k);
    for c in 0..k {
        let nk: f64 = resp.iter().map(|r| r[c]).sum::<f64>() + WEIGHT_FLOOR;
        let mean: Vec<f64> = (0..d)
            .map(|j| {
                points
                    .iter()
                    .zip(resp)
                    .map(|(p, r)| r[c] * p[j])
                    .sum::<f64>()
                    / nk
            })
            .collect();
        let mut covariance = vec![0.0; d * d];
        for (p, r) in points.iter().zip(resp) {
            let diff: Vec<f64> = p.iter().zip(&mean).map(|(v, m)| v - m).collect();
            for a in 0..d {
                let scaled = r[c] * diff[a];
                for b in 0..d {
                    covariance[a * d + b] += scaled * diff[b];
                }
            }
        }
        for value in &mut covariance {
            *value /= nk;
        }
        for a in 0..d {
            covariance[a * d + a] += reg_covar;
        }
        precision_cholesky.push(precision_of(&covariance, d)?);
        weights.push(nk / n as f64);
        means.push(mean);
    }
    // scikit-learn normalizes the weights again (`weights /= weights.sum()`).
    let sum: f64 = weights.iter().sum();
    weights.iter_mut().for_each(|w| *w /= sum);
    Ok(GaussianMixture {
        weights,
        means,
        precision_cholesky,
        dim: d,
    })
}

/// `U = L⁻ᵀ` for the Cholesky factor `L` of `covariance` (so that `U Uᵀ = Σ⁻¹`), row-major.
fn precision_of(covariance: &[f64], d: usize) -> Result<Vec<f64>, GmmError> {
    let mut l = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..=i {
            let sum = covariance[i * d + j] - dot(&l[i * d..i * d + j], &l[j * d..j * d + j]);
            if i == j {
                if sum <= 0.0 || !sum.is_finite() {
                    return Err(GmmError::IllDefinedCovariance);
                }
                l[i * d + i] = sum.sqrt();
            } else {
                l[i * d + j] = sum / l[j * d + j];
            }
        }
    }
    // Solve L X = I (X lower triangular), then U = Xᵀ.
    let mut inverse = vec![0.0; d * d];
    for col in 0..d {
        for i in col..d {
            let known: f64 = (col..i).map(|m| l[i * d + m] * inverse[m * d + col]).sum();
            let identity = if i == col { 1.0 } else { 0.0 };
            inverse[i * d + col] = (identity - known) / l[i * d + i];
        }
    }
    let mut u = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            u[i * d + j] = inverse[j * d + i];
        }
    }
    Ok(u)
}

fn log_sum_exp(values: &[f64]) -> f64 {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return max;
    }
    max + values.iter().map(|v| (v - max).exp()).sum::<f64>().ln()
}

#[cfg(test)]
#[path = "gmm_tests.rs"]
mod tests;
