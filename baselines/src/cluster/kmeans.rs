//! scikit-learn's `KMeans(n_clusters, n_init=1, random_state)` as `GaussianMixture` uses it to
//! start from (`init_params="kmeans"`): k-means++ seeding drawn from numpy's
//! `RandomState(seed)`, then Lloyd's iterations until the labels stop changing or the centres
//! move less than the tolerance. The data are centred first and distances computed as
//! `‖x‖² − 2x·c + ‖c‖²`, as scikit-learn computes them, so that near ties fall the same way.

use mb_datasets::PyRandom;

/// Lloyd's iterations at most (scikit-learn's `max_iter`).
const MAX_ITER: usize = 300;
/// Relative tolerance on the centres' movement (scikit-learn's `tol`).
const TOL: f64 = 1e-4;

/// The cluster of each point after k-means with `k` clusters (`k` ≥ 1, at most the points).
pub(crate) fn kmeans_labels(points: &[Vec<f64>], k: usize, seed: u32) -> Vec<usize> {
    let n = points.len();
    if n == 0 || k == 0 {
        return vec![0; n];
    }
    let dim = points[0].len();
    let mean: Vec<f64> = (0..dim)
        .map(|j| points.iter().map(|p| p[j]).sum::<f64>() / n as f64)
        .collect();
    let x: Vec<Vec<f64>> = points
        .iter()
        .map(|p| p.iter().zip(&mean).map(|(v, m)| v - m).collect())
        .collect();
    let tol = TOL
        * (0..dim)
            .map(|j| x.iter().map(|p| p[j] * p[j]).sum::<f64>() / n as f64)
            .sum::<f64>()
        / dim.max(1) as f64;
    let norms: Vec<f64> = x.iter().map(|p| dot(p, p)).collect();
    let mut random = PyRandom::numpy_legacy(seed);
    let mut centers = plus_plus(&x, &norms, k.min(n), &mut random);
    let mut labels = assign(&x, &centers);
    let mut converged = false;
    for _ in 0..MAX_ITER {
        let new_centers = update(&x, &labels, &centers);
        let shift: f64 = centers
            .iter()
            .zip(&new_centers)
            .map(|(a, b)| squared_distance(a, b))
            .sum();
        centers = new_centers;
        let new_labels = assign(&x, &centers);
        if new_labels == labels {
            converged = true;
            labels = new_labels;
            break;
        }
        labels = new_labels;
        if shift <= tol {
            break;
        }
    }
    if !converged {
        labels = assign(&x, &centers);
    }
    labels
}

/// k-means++ with scikit-learn's greedy trials (`2 + ⌊ln k⌋` candidates per centre).
fn plus_plus(x: &[Vec<f64>], norms: &[f64], k: usize, random: &mut PyRandom) -> Vec<Vec<f64>> {
    let n = x.len();
    let trials = 2 + (k as f64).ln() as usize;
    // numpy's `choice(n, p=uniform)`: the first index whose cumulative share exceeds a draw.
    let first = {
        let draw = random.random();
        let cumulative: Vec<f64> = (1..=n).map(|i| i as f64 / n as f64).collect();
        cumulative.partition_point(|&c| c <= draw).min(n - 1)
    };
    let mut centers = vec![x[first].clone()];
    let mut closest: Vec<f64> = (0..n)
        .map(|i| sklearn_distance(&x[i], norms[i], &x[first], norms[first]))
        .collect();
    let mut potential: f64 = closest.iter().sum();
    while centers.len() < k {
        let cumulative = stable_cumsum(&closest);
        let candidates: Vec<usize> = (0..trials)
            .map(|_| {
                let draw = random.random() * potential;
                cumulative.partition_point(|&c| c < draw).min(n - 1)
            })
            .collect();
        let mut best: Option<(f64, usize, Vec<f64>)> = None;
        for &candidate in &candidates {
            let distances: Vec<f64> = (0..n)
                .map(|i| {
                    sklearn_distance(&x[i], norms[i], &x[candidate], norms[candidate])
                        .min(closest[i])
                })
                .collect();
            let pot: f64 = distances.iter().sum();
            if best.as_ref().is_none_or(|(p, ..)| pot < *p) {
                best = Some((pot, candidate, distances));
            }
        }
        let Some((pot, candidate, distances)) = best else {
            break;
        };
        potential = pot;
        closest = distances;
        centers.push(x[candidate].clone());
    }
    centers
}

/// The nearest centre of each point (the first of equals), by `‖c‖² − 2x·c`.
fn assign(x: &[Vec<f64>], centers: &[Vec<f64>]) -> Vec<usize> {
    let center_norms: Vec<f64> = centers.iter().map(|c| dot(c, c)).collect();
    x.iter()
        .map(|p| {
            let mut best = (f64::INFINITY, 0);
            for (j, c) in centers.iter().enumerate() {
                let d = center_norms[j] - 2.0 * dot(p, c);
                if d < best.0 {
                    best = (d, j);
                }
            }
            best.1
        })
        .collect()
}

/// The mean of each cluster. An empty cluster takes the point farthest from its centre, which
/// leaves the cluster it was in (scikit-learn's `_relocate_empty_clusters_dense`).
fn update(x: &[Vec<f64>], labels: &[usize], centers: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let dim = x.first().map_or(0, Vec::len);
    let mut sums = vec![vec![0.0; dim]; centers.len()];
    let mut counts = vec![0usize; centers.len()];
    for (p, &l) in x.iter().zip(labels) {
        counts[l] += 1;
        for (s, v) in sums[l].iter_mut().zip(p) {
            *s += v;
        }
    }
    let empty: Vec<usize> = (0..centers.len()).filter(|&c| counts[c] == 0).collect();
    if !empty.is_empty() {
        let mut far: Vec<(f64, usize)> = x
            .iter()
            .zip(labels)
            .enumerate()
            .map(|(i, (p, &l))| (squared_distance(p, &centers[l]), i))
            .collect();
        far.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (&cluster, &(_, point)) in empty.iter().zip(&far) {
            let old = labels[point];
            sums[cluster].clone_from(&x[point]);
            for (o, v) in sums[old].iter_mut().zip(&x[point]) {
                *o -= v;
            }
            counts[cluster] = 1;
            counts[old] -= 1;
        }
    }
    sums.into_iter()
        .zip(counts)
        .map(|(sum, count)| match count {
            0 => sum,
            _ => sum.into_iter().map(|s| s / count as f64).collect(),
        })
        .collect()
}

/// Squared euclidean distance as scikit-learn computes it (`‖x‖² − 2x·y + ‖y‖²`, at least 0).
fn sklearn_distance(x: &[f64], x_norm: f64, y: &[f64], y_norm: f64) -> f64 {
    (x_norm - 2.0 * dot(x, y) + y_norm).max(0.0)
}

fn squared_distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Running sums (scikit-learn's `stable_cumsum`, in f64).
fn stable_cumsum(values: &[f64]) -> Vec<f64> {
    values
        .iter()
        .scan(0.0, |sum, v| {
            *sum += v;
            Some(*sum)
        })
        .collect()
}
