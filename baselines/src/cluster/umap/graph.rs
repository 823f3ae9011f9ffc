//! The fuzzy graph of the input (umap-learn's `nearest_neighbors`, `smooth_knn_dist`,
//! `compute_membership_strengths` and `fuzzy_simplicial_set` for small inputs).

/// Bisection steps looking for each point's `sigma` (`smooth_knn_dist`'s `n_iter`).
const SIGMA_ITERATIONS: usize = 64;
/// How close the membership sum must come to log2(k) (umap-learn's `SMOOTH_K_TOLERANCE`).
const SMOOTH_K_TOLERANCE: f64 = 1e-5;
/// Smallest `sigma` as a fraction of the mean neighbour distance (`MIN_K_DIST_SCALE`).
const MIN_K_DIST_SCALE: f64 = 1e-3;

/// Each point's `k` nearest points by cosine distance, nearest first, with their distances, as
/// umap-learn finds them on small inputs: all pairwise distances, then each row sorted. A point
/// is at distance 0 from itself, so it comes first (after any duplicate of lower index: ties
/// go to the lower index, where numpy's quicksort leaves them in no set order). `k` lies in
/// 1..n; the distance matrix takes n² doubles.
pub(super) fn nearest_neighbors(points: &[Vec<f32>], k: usize) -> (Vec<Vec<usize>>, Vec<Vec<f64>>) {
    let n = points.len();
    let norms: Vec<f64> = points.iter().map(|p| dot(p, p)).collect();
    let mut matrix = vec![0.0; n * n];
    for (i, x) in points.iter().enumerate() {
        for (j, y) in points.iter().enumerate().skip(i + 1) {
            let d = cosine_distance(dot(x, y), norms[i], norms[j]);
            matrix[i * n + j] = d;
            matrix[j * n + i] = d;
        }
    }
    matrix
        .chunks(n)
        .map(|row| {
            let by_distance = |x: &usize, y: &usize| row[*x].total_cmp(&row[*y]).then(x.cmp(y));
            let mut order: Vec<usize> = (0..n).collect();
            order.select_nth_unstable_by(k - 1, by_distance);
            order.truncate(k);
            order.sort_unstable_by(by_distance);
            let distances = order.iter().map(|&j| row[j]).collect();
            (order, distances)
        })
        .unzip()
}

/// umap-learn's `cosine` from the dot product `xy` and squared norms `xx`, `yy`: 1 − cos, with
/// a zero vector at distance 0 from a zero vector and 1 from any other.
pub(super) fn cosine_distance(xy: f64, xx: f64, yy: f64) -> f64 {
    match (xx == 0.0, yy == 0.0) {
        (true, true) => 0.0,
        (true, false) | (false, true) => 1.0,
        (false, false) => 1.0 - xy / (xx * yy).sqrt(),
    }
}

/// Dot product of two single-precision vectors accumulated in double precision, as umap-learn's
/// numba metrics accumulate (eight partial sums, so that it vectorises).
fn dot(x: &[f32], y: &[f32]) -> f64 {
    let (xs, ys) = (x.chunks_exact(8), y.chunks_exact(8));
    let tail: f64 = (xs.remainder().iter().zip(ys.remainder()))
        .map(|(&a, &b)| f64::from(a) * f64::from(b))
        .sum();
    let mut sums = [0.0f64; 8];
    for (xc, yc) in xs.zip(ys) {
        for ((s, &a), &b) in sums.iter_mut().zip(xc).zip(yc) {
            *s += f64::from(a) * f64::from(b);
        }
    }
    sums.iter().sum::<f64>() + tail
}

/// A symmetric weighted graph: for each vertex, its `(neighbour, weight)` edges by increasing
/// neighbour, no self-loops and no zero weights (a scipy sparse matrix after
/// `eliminate_zeros`).
pub(super) type Graph = Vec<Vec<(usize, f64)>>;

/// umap-learn's `fuzzy_simplicial_set` with `set_op_mix_ratio` 1 and `local_connectivity` 1:
/// each point's memberships `exp(−(d − rho)/sigma)` to its neighbours (1 up to `rho`, 0 to
/// itself), then the fuzzy union `A + Aᵀ − A∘Aᵀ`.
pub(super) fn fuzzy_simplicial_set(indices: &[Vec<usize>], distances: &[Vec<f64>]) -> Graph {
    let k = indices.first().map_or(0, Vec::len);
    let (sigmas, rhos) = smooth_knn_dist(distances, k as f64);
    let local: Graph = (indices.iter().zip(distances).enumerate())
        .map(|(i, (neighbours, dists))| {
            let mut row: Vec<(usize, f64)> = (neighbours.iter().zip(dists))
                .filter(|&(&j, _)| j != i)
                .map(|(&j, &d)| (j, membership(d, rhos[i], sigmas[i])))
                .filter(|&(_, w)| w != 0.0)
                .collect();
            row.sort_unstable_by_key(|&(j, _)| j);
            row
        })
        .collect();
    let mut transpose: Graph = vec![Vec::new(); local.len()];
    for (i, row) in local.iter().enumerate() {
        for &(j, w) in row {
            transpose[j].push((i, w));
        }
    }
    local
        .iter()
        .zip(&transpose)
        .map(|(row, column)| fuzzy_union(row, column))
        .collect()
}

/// umap-learn's `smooth_knn_dist` with `local_connectivity` 1: for each row of neighbour
/// distances (the point itself first), `rho` is the smallest positive distance and `sigma` is
/// bisected until the memberships of the other neighbours sum to log2(k), then floored at 1e-3
/// of the row's mean distance (of all rows' when `rho` is 0). Returns `(sigmas, rhos)`.
pub(super) fn smooth_knn_dist(distances: &[Vec<f64>], k: f64) -> (Vec<f64>, Vec<f64>) {
    let target = k.log2();
    let count = distances.iter().map(Vec::len).sum::<usize>().max(1);
    let mean_all = distances.iter().flatten().sum::<f64>() / count as f64;
    distances
        .iter()
        .map(|row| {
            let rho = row.iter().copied().find(|&d| d > 0.0).unwrap_or(0.0);
            let sigma = bisect_sigma(&row[row.len().min(1)..], rho, target);
            let mean = if rho > 0.0 {
                row.iter().sum::<f64>() / row.len().max(1) as f64
            } else {
                mean_all
            };
            (sigma.max(MIN_K_DIST_SCALE * mean), rho)
        })
        .unzip()
}

/// The `sigma` whose memberships of `others` sum to `target`, by umap-learn's search: doubling
/// from 1 until too large, then halving the interval, 64 steps at most.
fn bisect_sigma(others: &[f64], rho: f64, target: f64) -> f64 {
    let (mut lo, mut hi, mut mid) = (0.0, f64::INFINITY, 1.0);
    for _ in 0..SIGMA_ITERATIONS {
        let sum: f64 = others
            .iter()
            .map(|&d| {
                if d - rho > 0.0 {
                    (-(d - rho) / mid).exp()
                } else {
                    1.0
                }
            })
            .sum();
        if (sum - target).abs() < SMOOTH_K_TOLERANCE {
            break;
        }
        if sum > target {
            hi = mid;
            mid = (lo + hi) / 2.0;
        } else {
            lo = mid;
            mid = if hi.is_infinite() {
                mid * 2.0
            } else {
                (lo + hi) / 2.0
            };
        }
    }
    mid
}

/// Membership strength of a neighbour at distance `d` (`compute_membership_strengths`).
pub(super) fn membership(d: f64, rho: f64, sigma: f64) -> f64 {
    if d - rho <= 0.0 || sigma == 0.0 {
        1.0
    } else {
        (-(d - rho) / sigma).exp()
    }
}

/// Merges a row of `A` with the same row of `Aᵀ` (both sorted): `a + b − a·b` where both hold an
/// edge, the one weight where only one does.
fn fuzzy_union(row: &[(usize, f64)], column: &[(usize, f64)]) -> Vec<(usize, f64)> {
    let mut merged = Vec::with_capacity(row.len() + column.len());
    let (mut r, mut c) = (row.iter().peekable(), column.iter().peekable());
    loop {
        let edge = match (r.peek(), c.peek()) {
            (Some(&&(i, a)), Some(&&(j, b))) if i == j => {
                r.next();
                c.next();
                (i, a + b - a * b)
            }
            (Some(&&(i, a)), Some(&&(j, _))) if i < j => {
                r.next();
                (i, a)
            }
            (Some(&&(i, a)), None) => {
                r.next();
                (i, a)
            }
            (_, Some(&&(j, b))) => {
                c.next();
                (j, b)
            }
            (None, None) => break,
        };
        merged.push(edge);
    }
    merged
}
