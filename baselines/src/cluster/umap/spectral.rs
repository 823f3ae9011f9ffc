//! The initial layout of a UMAP reduction (umap-learn's `spectral.py`): the eigenvectors of the
//! graph's symmetric normalised Laplacian `I − D^(−1/2)·W·D^(−1/2)` for its smallest eigenvalues
//! after the trivial one, and umap-learn's `multi_component_layout` when the graph is
//! disconnected.
//!
//! umap-learn asks ARPACK (`eigsh(which="SM")`, tolerance 1e-4) for the eigenvectors; this
//! solves the dense matrix exactly instead (module `eigen`), which costs O(n³) but cannot fail to
//! converge. An eigenvector's sign is arbitrary in both. Two of umap-learn's numerical accidents
//! are not reproduced (both seen with scipy 1.17 and scikit-learn 1.9):
//!
//! - on small components ARPACK sometimes misses the trivial eigenvalue 0, and umap-learn then
//!   lays the component out with eigenvectors 3 to `dim + 2`; here it is always 2 to `dim + 1`;
//! - scikit-learn's Euclidean distance from a component's place to itself can come out near
//!   1e-8 instead of 0, shrinking that component to a point before optimisation; here a place
//!   is at distance 0 from itself.

use super::eigen::{dot, smallest_eigenvectors};
use super::graph::{cosine_distance, Graph};
use super::Rng;

/// The initial layout of `graph`'s vertices, row-major, `dim` coordinates each: the spectral
/// embedding if the graph is connected, else umap-learn's layout of the components; uniform in
/// [−10, 10] where the eigensolver fails, as umap-learn falls back.
pub(super) fn spectral_layout(
    points: &[Vec<f32>],
    graph: &Graph,
    dim: usize,
    rng: &mut Rng,
) -> Vec<f64> {
    let (labels, components) = connected_components(graph);
    if components > 1 {
        return multi_component_layout(points, graph, &labels, components, dim, rng);
    }
    laplacian_layout(graph, dim).unwrap_or_else(|| uniform(graph.len() * dim, 10.0, rng))
}

/// `count` draws uniform in [−range, range).
fn uniform(count: usize, range: f64, rng: &mut Rng) -> Vec<f64> {
    (0..count).map(|_| rng.uniform(-range, range)).collect()
}

/// Each vertex's component, numbered in order of their lowest vertex (as scipy's
/// `connected_components` numbers them), and the number of components.
pub(super) fn connected_components(graph: &Graph) -> (Vec<usize>, usize) {
    let mut labels = vec![usize::MAX; graph.len()];
    let mut components = 0;
    let mut stack = Vec::new();
    for start in 0..graph.len() {
        if labels[start] != usize::MAX {
            continue;
        }
        labels[start] = components;
        stack.push(start);
        while let Some(vertex) = stack.pop() {
            for &(next, _) in &graph[vertex] {
                if labels[next] == usize::MAX {
                    labels[next] = components;
                    stack.push(next);
                }
            }
        }
        components += 1;
    }
    (labels, components)
}

/// The eigenvectors of a connected graph's normalised Laplacian for eigenvalues 2 to `dim + 1`
/// in increasing order (umap-learn's `_spectral_layout`), row-major; `None` if not computable.
fn laplacian_layout(graph: &Graph, dim: usize) -> Option<Vec<f64>> {
    let n = graph.len();
    let sqrt_degree: Vec<f64> = graph
        .iter()
        .map(|row| row.iter().map(|&(_, w)| w).sum::<f64>().sqrt())
        .collect();
    let mut laplacian = vec![0.0; n * n];
    for (i, row) in graph.iter().enumerate() {
        laplacian[i * n + i] += 1.0;
        for &(j, w) in row {
            laplacian[i * n + j] -= w / (sqrt_degree[i] * sqrt_degree[j]);
        }
    }
    let vectors = smallest_eigenvectors(laplacian, n, dim + 1)?;
    Some(row_major(&vectors[1..], n))
}

/// Vectors of length `n`, as the columns of a row-major matrix.
fn row_major(columns: &[Vec<f64>], n: usize) -> Vec<f64> {
    (0..n)
        .flat_map(|i| columns.iter().map(move |c| c[i]))
        .collect()
}

/// umap-learn's `multi_component_layout`: places the components (on ± unit axes when there are
/// at most `2·dim` of them, else by `component_layout`), then lays each out spectrally within
/// half the distance to its nearest neighbouring component — or uniformly there, when it is
/// too small for its own spectral layout.
fn multi_component_layout(
    points: &[Vec<f32>],
    graph: &Graph,
    labels: &[usize],
    components: usize,
    dim: usize,
    rng: &mut Rng,
) -> Vec<f64> {
    let meta = if components > 2 * dim {
        // umap-learn guesses uniformly in [0, 10) when it cannot place the components.
        component_layout(points, labels, components, dim).unwrap_or_else(|| {
            (0..components * dim)
                .map(|_| rng.uniform(0.0, 10.0))
                .collect()
        })
    } else {
        let half = components.div_ceil(2);
        let mut corners = vec![0.0; components * dim];
        for c in 0..components {
            corners[c * dim + c % half] = if c < half { 1.0 } else { -1.0 };
        }
        corners
    };
    let mut local_index = vec![0; graph.len()];
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); components];
    for (vertex, &label) in labels.iter().enumerate() {
        local_index[vertex] = members[label].len();
        members[label].push(vertex);
    }
    let mut result = vec![0.0; graph.len() * dim];
    for (centre, members) in meta.chunks(dim).zip(&members) {
        let nearest = (meta.chunks(dim))
            .map(|other| {
                centre
                    .iter()
                    .zip(other)
                    .map(|(x, y)| (x - y).powi(2))
                    .sum::<f64>()
                    .sqrt()
            })
            .filter(|&d| d > 0.0)
            .fold(f64::INFINITY, f64::min);
        // Components placed all at one point (never seen) keep a unit range.
        let range = if nearest.is_finite() {
            nearest / 2.0
        } else {
            1.0
        };
        let layout = if members.len() < 2 * dim || members.len() <= dim + 1 {
            uniform(members.len() * dim, range, rng)
        } else {
            let subgraph: Graph = (members.iter())
                .map(|&v| graph[v].iter().map(|&(j, w)| (local_index[j], w)).collect())
                .collect();
            let mut layout = laplacian_layout(&subgraph, dim)
                .unwrap_or_else(|| uniform(members.len() * dim, 10.0, rng));
            let largest = layout.iter().fold(0.0, |m: f64, x| m.max(x.abs()));
            let expansion = if largest > 0.0 { range / largest } else { 1.0 };
            layout.iter_mut().for_each(|x| *x *= expansion);
            layout
        };
        for (&vertex, coordinates) in members.iter().zip(layout.chunks(dim)) {
            for (d, (x, c)) in coordinates.iter().zip(centre).enumerate() {
                result[vertex * dim + d] = x + c;
            }
        }
    }
    result
}

/// umap-learn's `component_layout`: the components' centroids laid out by scikit-learn's
/// `SpectralEmbedding` of the affinities `exp(−d²)` (cosine `d`), scaled so the largest
/// coordinate is 1. That embedding takes eigenvectors 2 to `dim + 1` of the normalised Laplacian
/// (the affinity's diagonal ignored), divides them by the square-rooted degrees and turns each so
/// its largest entry in magnitude is positive.
fn component_layout(
    points: &[Vec<f32>],
    labels: &[usize],
    components: usize,
    dim: usize,
) -> Option<Vec<f64>> {
    let width = points.first().map_or(0, Vec::len);
    let mut centroids = vec![vec![0.0; width]; components];
    let mut sizes = vec![0usize; components];
    for (point, &label) in points.iter().zip(labels) {
        sizes[label] += 1;
        for (c, &x) in centroids[label].iter_mut().zip(point) {
            *c += f64::from(x);
        }
    }
    for (centroid, &size) in centroids.iter_mut().zip(&sizes) {
        centroid.iter_mut().for_each(|c| *c /= size.max(1) as f64);
    }
    let norms: Vec<f64> = centroids.iter().map(|c| dot(c, c)).collect();
    let mut affinity = vec![0.0; components * components];
    for (i, x) in centroids.iter().enumerate() {
        for (j, y) in centroids.iter().enumerate().filter(|&(j, _)| j != i) {
            affinity[i * components + j] =
                (-cosine_distance(dot(x, y), norms[i], norms[j]).powi(2)).exp();
        }
    }
    let sqrt_degree: Vec<f64> = affinity
        .chunks(components)
        .map(|r| r.iter().sum::<f64>().sqrt())
        .collect();
    let mut laplacian = affinity;
    for (i, row) in laplacian.chunks_mut(components).enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = if i == j {
                1.0
            } else {
                -*x / (sqrt_degree[i] * sqrt_degree[j])
            };
        }
    }
    let mut vectors = smallest_eigenvectors(laplacian, components, dim + 1)?;
    for vector in &mut vectors {
        vector
            .iter_mut()
            .zip(&sqrt_degree)
            .for_each(|(x, d)| *x /= d);
        let largest = vector
            .iter()
            .fold(0.0, |m: f64, x| if x.abs() > m.abs() { *x } else { m });
        if largest < 0.0 {
            vector.iter_mut().for_each(|x| *x = -*x);
        }
    }
    let mut layout = row_major(&vectors[1..], components);
    let max = layout.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max > 0.0 {
        layout.iter_mut().for_each(|x| *x /= max);
    }
    Some(layout)
}
