//! The layout's optimisation (umap-learn's `find_ab_params` and `layouts.py`'s
//! `optimize_layout_euclidean`).

use super::graph::Graph;
use super::Rng;

/// Weight of the negative samples (umap-learn's `repulsion_strength`, left at its default).
const REPULSION_STRENGTH: f64 = 1.0;

/// umap-learn's `find_ab_params`: the `(a, b)` of `1 / (1 + a·x^(2b))` closest in least squares
/// to 1 below `min_dist` and `exp(−(x − min_dist)/spread)` above, over 300 evenly spaced `x` in
/// [0, 3·spread]. scipy's `curve_fit` runs Levenberg–Marquardt from (1, 1); so does this, with
/// the exact Jacobian (the minimum is the same; the last digits may differ).
pub(super) fn find_ab_params(spread: f64, min_dist: f64) -> (f64, f64) {
    let xs: Vec<f64> = (0..300)
        .map(|i| 3.0 * spread * f64::from(i) / 299.0)
        .collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|&x| {
            if x < min_dist {
                1.0
            } else {
                (-(x - min_dist) / spread).exp()
            }
        })
        .collect();
    let cost = |a: f64, b: f64| -> f64 {
        let residual = |(&x, &y): (&f64, &f64)| 1.0 / (1.0 + a * x.powf(2.0 * b)) - y;
        xs.iter().zip(&ys).map(residual).map(|r| r * r).sum()
    };
    let (mut a, mut b, mut damping) = (1.0, 1.0, 1e-3);
    let mut current = cost(a, b);
    for _ in 0..500 {
        // Normal equations JᵀJ·δ = −Jᵀr of the residuals r = f(x) − y.
        let (mut aa, mut ab, mut bb, mut ra, mut rb) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (&x, &y) in xs.iter().zip(&ys) {
            let p = if x > 0.0 { x.powf(2.0 * b) } else { 0.0 };
            let denominator = (1.0 + a * p) * (1.0 + a * p);
            let da = -p / denominator;
            let db = if x > 0.0 {
                -2.0 * a * p * x.ln() / denominator
            } else {
                0.0
            };
            let r = 1.0 / (1.0 + a * p) - y;
            (aa, ab, bb, ra, rb) = (
                aa + da * da,
                ab + da * db,
                bb + db * db,
                ra + da * r,
                rb + db * r,
            );
        }
        let (m00, m11) = (aa * (1.0 + damping), bb * (1.0 + damping));
        let determinant = m00 * m11 - ab * ab;
        if !(determinant.is_finite() && determinant > 0.0) {
            break;
        }
        let step_a = -(m11 * ra - ab * rb) / determinant;
        let step_b = -(m00 * rb - ab * ra) / determinant;
        let trial = cost(a + step_a, b + step_b);
        if trial.is_finite() && trial <= current {
            (a, b, current) = (a + step_a, b + step_b, trial);
            damping /= 10.0;
            if step_a.abs() <= 1e-12 * a.abs() && step_b.abs() <= 1e-12 * b.abs() {
                break;
            }
        } else if damping > 1e12 {
            break;
        } else {
            damping *= 10.0;
        }
    }
    (a, b)
}

/// An edge of the graph as the optimisation samples it: every `epochs_per_sample` epochs
/// (1 for the heaviest edge, more for weaker ones).
pub(super) struct Edge {
    head: usize,
    tail: usize,
    epochs_per_sample: f64,
}

/// The graph's edges in row order with their sampling periods (umap-learn's
/// `make_epochs_per_sample`: `n_epochs / (n_epochs · w / max_weight)`); an edge that would never
/// be sampled is left out.
pub(super) fn sampled_edges(graph: &Graph, max_weight: f64, n_epochs: usize) -> Vec<Edge> {
    let epochs = n_epochs as f64;
    (graph.iter().enumerate())
        .flat_map(|(head, row)| row.iter().map(move |&(tail, w)| (head, tail, w)))
        .filter_map(|(head, tail, w)| {
            let samples = epochs * (w / max_weight);
            let epochs_per_sample = epochs / samples;
            (samples > 0.0).then_some(Edge {
                head,
                tail,
                epochs_per_sample,
            })
        })
        .collect()
}

/// Settings of the layout optimisation.
pub(super) struct Layout {
    /// Coordinates per point.
    pub(super) dim: usize,
    pub(super) n_epochs: usize,
    /// The low-dimensional similarity's `a` and `b` ([`find_ab_params`]).
    pub(super) a: f64,
    pub(super) b: f64,
    pub(super) negative_sample_rate: f64,
    /// The first epochs' step size.
    pub(super) initial_alpha: f64,
}

/// umap-learn's `optimize_layout_euclidean` with `move_other`, single-threaded: each epoch, every
/// edge due is pulled together (gradient clipped to ±4 per axis, both ends moved) and its head
/// pushed away from random points, as many as its negative samples fell due; the step size
/// decreases linearly from `initial_alpha` to 0.
pub(super) fn optimize_layout(
    embedding: &mut [f64],
    edges: &[Edge],
    layout: &Layout,
    rng: &mut Rng,
) {
    let &Layout {
        dim,
        n_epochs,
        a,
        b,
        ..
    } = layout;
    let n_vertices = embedding.len() / dim.max(1);
    let per_negative: Vec<f64> = edges
        .iter()
        .map(|e| e.epochs_per_sample / layout.negative_sample_rate)
        .collect();
    let mut next_negative = per_negative.clone();
    let mut next_sample: Vec<f64> = edges.iter().map(|e| e.epochs_per_sample).collect();
    let mut alpha = layout.initial_alpha;
    let clip = |g: f64| g.clamp(-4.0, 4.0);
    for epoch in 0..n_epochs {
        let n = epoch as f64;
        for (i, edge) in edges.iter().enumerate() {
            if next_sample[i] > n {
                continue;
            }
            let (j, k) = (edge.head * dim, edge.tail * dim);
            let d2 = squared_distance(embedding, j, k, dim);
            let coefficient = if d2 > 0.0 {
                let power = d2.powf(b); // d2^(b − 1) = power / d2
                -2.0 * a * b * (power / d2) / (a * power + 1.0)
            } else {
                0.0
            };
            for d in 0..dim {
                let gradient = clip(coefficient * (embedding[j + d] - embedding[k + d]));
                embedding[j + d] += gradient * alpha;
                embedding[k + d] -= gradient * alpha;
            }
            next_sample[i] += edge.epochs_per_sample;
            // Truncated like Python's int(); never negative, as an edge's negative samples
            // never run ahead of its samples.
            let negatives = ((n - next_negative[i]) / per_negative[i]) as usize;
            for _ in 0..negatives {
                let k = rng.below(n_vertices) * dim;
                let d2 = squared_distance(embedding, j, k, dim);
                if d2 > 0.0 {
                    let coefficient =
                        2.0 * REPULSION_STRENGTH * b / ((0.001 + d2) * (a * d2.powf(b) + 1.0));
                    for d in 0..dim {
                        embedding[j + d] +=
                            clip(coefficient * (embedding[j + d] - embedding[k + d])) * alpha;
                    }
                }
            }
            next_negative[i] += negatives as f64 * per_negative[i];
        }
        alpha = layout.initial_alpha * (1.0 - n / n_epochs as f64);
    }
}

/// Squared Euclidean distance between the points starting at offsets `j` and `k`.
fn squared_distance(embedding: &[f64], j: usize, k: usize, dim: usize) -> f64 {
    (0..dim)
        .map(|d| (embedding[j + d] - embedding[k + d]).powi(2))
        .sum()
}
