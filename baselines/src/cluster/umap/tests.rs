use super::eigen::smallest_eigenvectors;
use super::graph::{membership, smooth_knn_dist};
use super::spectral::connected_components;
use super::*;

/// `count` points in `width` dimensions around `centres` (cycled), Gaussian with `noise`.
fn blobs(centres: &[Vec<f32>], count: usize, noise: f64, rng: &mut Rng) -> Vec<Vec<f32>> {
    (0..count)
        .map(|i| {
            let centre = &centres[i % centres.len()];
            centre
                .iter()
                .map(|&c| c + (noise * rng.normal()) as f32)
                .collect()
        })
        .collect()
}

fn random_centres(count: usize, width: usize, scale: f64, rng: &mut Rng) -> Vec<Vec<f32>> {
    (0..count)
        .map(|_| (0..width).map(|_| (scale * rng.normal()) as f32).collect())
        .collect()
}

fn squared(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| (a - b).powi(2)).sum()
}

/// The point nearest point `i` in `layout`.
fn nearest(layout: &[Vec<f64>], i: usize) -> Option<usize> {
    let distance = |j: &usize| squared(&layout[i], &layout[*j]);
    (0..layout.len())
        .filter(|&j| j != i)
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
}

/// Share of points whose nearest other point in `layout` has the same label.
fn nearest_neighbour_agreement(layout: &[Vec<f64>], labels: &[usize]) -> f64 {
    let agreeing = (0..layout.len())
        .filter(|&i| nearest(layout, i).is_some_and(|j| labels[j] == labels[i]))
        .count();
    agreeing as f64 / layout.len() as f64
}

#[test]
fn a_seed_fixes_the_layout() {
    let mut rng = Rng::new(7);
    let points = blobs(&random_centres(1, 20, 1.0, &mut rng), 60, 1.0, &mut rng);
    let params = UmapParams::new(10, 2);
    let first = reduce(&points, &params).unwrap();
    assert_eq!(first.len(), 60);
    assert!(first
        .iter()
        .all(|row| row.len() == 2 && row.iter().all(|x| x.is_finite())));
    assert_eq!(first, reduce(&points, &params).unwrap());
    let other = reduce(&points, &UmapParams { seed: 1, ..params }).unwrap();
    assert_ne!(first, other);
}

#[test]
fn separated_blobs_stay_apart() {
    let mut rng = Rng::new(3);
    let centres = random_centres(3, 50, 1.0, &mut rng);
    let points = blobs(&centres, 150, 0.25, &mut rng);
    let labels: Vec<usize> = (0..150).map(|i| i % 3).collect();
    // 15 neighbours keep each blob its own component: umap-learn's multi-component layout.
    let layout = reduce(&points, &UmapParams::new(15, 2)).unwrap();
    assert!(nearest_neighbour_agreement(&layout, &labels) > 0.95);
    // Seven blobs in two dimensions are placed by the spectral embedding of their centroids.
    let centres = random_centres(7, 50, 1.0, &mut rng);
    let points = blobs(&centres, 140, 0.25, &mut rng);
    let labels: Vec<usize> = (0..140).map(|i| i % 7).collect();
    let layout = reduce(&points, &UmapParams::new(10, 2)).unwrap();
    assert!(nearest_neighbour_agreement(&layout, &labels) > 0.95);
    // A blob too small for its own spectral layout is spread uniformly around its place.
    let centres = random_centres(2, 50, 1.0, &mut rng);
    let mut points = blobs(&centres[..1], 40, 0.25, &mut rng);
    points.extend(blobs(&centres[1..], 3, 0.25, &mut rng));
    let labels: Vec<usize> = (0..43).map(|i| usize::from(i >= 40)).collect();
    let layout = reduce(&points, &UmapParams::new(3, 2)).unwrap();
    assert!(nearest_neighbour_agreement(&layout, &labels) > 0.95);
}

#[test]
fn connected_graphs_are_laid_out_spectrally() {
    // More neighbours than a blob holds join the blobs into one component.
    let mut rng = Rng::new(5);
    let points = blobs(&random_centres(3, 50, 1.0, &mut rng), 150, 0.25, &mut rng);
    let labels: Vec<usize> = (0..150).map(|i| i % 3).collect();
    let (indices, distances) = nearest_neighbors(&points, 60);
    assert_eq!(
        connected_components(&fuzzy_simplicial_set(&indices, &distances)).1,
        1
    );
    let layout = reduce(&points, &UmapParams::new(60, 2)).unwrap();
    assert!(nearest_neighbour_agreement(&layout, &labels) > 0.95);
    // Points along an arc keep their neighbours along it.
    let (u, v) = (
        random_centres(1, 50, 1.0, &mut rng),
        random_centres(1, 50, 1.0, &mut rng),
    );
    let arc: Vec<Vec<f32>> = (0..80)
        .map(|i| {
            let t = 1.5 * f64::from(i) / 79.0;
            let (c, s) = (t.cos() as f32, t.sin() as f32);
            u[0].iter()
                .zip(&v[0])
                .map(|(&x, &y)| c * x + s * y)
                .collect()
        })
        .collect();
    let layout = reduce(&arc, &UmapParams::new(10, 2)).unwrap();
    let local = (0..80)
        .filter(|&i| nearest(&layout, i).is_some_and(|j| j.abs_diff(i) <= 3))
        .count();
    assert!(
        local >= 76,
        "{local} of 80 points have an arc neighbour nearest"
    );
}

#[test]
fn ab_params_match_umap_learn() {
    // umap-learn's find_ab_params (scipy 1.17's curve_fit), which stops a little short of the
    // least-squares minimum this reaches: about 1.5e-7 away.
    let cases = [
        ((1.0, 0.1), (1.576_943_460, 0.895_060_878)),
        ((1.0, 0.0), (1.932_808_398, 0.790_494_974)),
        ((2.0, 0.5), (0.258_878_741, 1.057_499_700)),
    ];
    let close = |x: f64, y: f64| (x - y).abs() < 1e-6;
    for ((spread, min_dist), (a, b)) in cases {
        let (fitted_a, fitted_b) = find_ab_params(spread, min_dist);
        let fitted = format!("({fitted_a}, {fitted_b}) for ({spread}, {min_dist})");
        assert!(close(fitted_a, a) && close(fitted_b, b), "{fitted}");
    }
}

#[test]
fn memberships_sum_to_log2_k() {
    let mut rng = Rng::new(11);
    let points = blobs(&random_centres(2, 16, 1.0, &mut rng), 40, 1.0, &mut rng);
    let (indices, distances) = nearest_neighbors(&points, 8);
    assert!(indices.iter().enumerate().all(|(i, row)| row[0] == i));
    assert!(distances
        .iter()
        .all(|row| row[0] == 0.0 && row.windows(2).all(|w| w[0] <= w[1])));
    let (sigmas, rhos) = smooth_knn_dist(&distances, 8.0);
    for ((row, sigma), rho) in distances.iter().zip(&sigmas).zip(&rhos) {
        assert_eq!(*rho, row[1]);
        let sum: f64 = row[1..].iter().map(|&d| membership(d, *rho, *sigma)).sum();
        assert!((sum - 3.0).abs() < 1e-4, "membership sum {sum}");
    }
    let graph = fuzzy_simplicial_set(&indices, &distances);
    for (i, row) in graph.iter().enumerate() {
        for &(j, w) in row {
            assert!(w > 0.0 && w <= 1.0 && j != i);
            assert!(
                graph[j].iter().any(|&(k, v)| k == i && v == w),
                "asymmetric edge"
            );
        }
    }
}

#[test]
fn eigenvectors_are_exact() {
    // The normalised Laplacian of a path of n vertices has eigenvalues 1 − cos(πk/(n − 1)).
    let n: usize = 9;
    let graph: Graph = (0..n)
        .map(|i| {
            [i.checked_sub(1), (i + 1 < n).then_some(i + 1)]
                .into_iter()
                .flatten()
                .map(|j| (j, 1.0))
                .collect()
        })
        .collect();
    let degree = |i: usize| graph[i].len() as f64;
    let mut laplacian = vec![0.0; n * n];
    for (i, row) in graph.iter().enumerate() {
        laplacian[i * n + i] = 1.0;
        for &(j, w) in row {
            laplacian[i * n + j] = -w / (degree(i) * degree(j)).sqrt();
        }
    }
    let vectors = smallest_eigenvectors(laplacian.clone(), n, 4).unwrap();
    for (k, v) in vectors.iter().enumerate() {
        let expected = 1.0 - (std::f64::consts::PI * k as f64 / (n - 1) as f64).cos();
        let lv: Vec<f64> = laplacian
            .chunks(n)
            .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
            .collect();
        assert!(
            lv.iter()
                .zip(v)
                .all(|(x, y)| (x - expected * y).abs() < 1e-10),
            "eigenpair {k}"
        );
        assert!((v.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-12);
    }
    // A random symmetric matrix: every eigenpair, ascending, summing to the trace.
    let (n, mut rng) = (40, Rng::new(2));
    let mut random = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let x = rng.normal();
            random[i * n + j] = x;
            random[j * n + i] = x;
        }
    }
    let vectors = smallest_eigenvectors(random.clone(), n, n).unwrap();
    let values: Vec<f64> = vectors
        .iter()
        .map(|v| {
            let av: Vec<f64> = random
                .chunks(n)
                .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
                .collect();
            let value: f64 = av.iter().zip(v).map(|(a, b)| a * b).sum();
            assert!(av.iter().zip(v).all(|(x, y)| (x - value * y).abs() < 1e-10));
            value
        })
        .collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]));
    let trace: f64 = (0..n).map(|i| random[i * n + i]).sum();
    assert!((values.iter().sum::<f64>() - trace).abs() < 1e-9);
    // Repeated eigenvalues (a complete graph's) still give orthonormal vectors.
    let m = 6;
    let complete: Vec<f64> = (0..m * m)
        .map(|i| {
            if i % (m + 1) == 0 {
                1.0
            } else {
                -1.0 / (m - 1) as f64
            }
        })
        .collect();
    let vectors = smallest_eigenvectors(complete, m, m).unwrap();
    for (a, x) in vectors.iter().enumerate() {
        for (b, y) in vectors.iter().enumerate() {
            let product: f64 = x.iter().zip(y).map(|(p, q)| p * q).sum();
            assert!((product - f64::from(u8::from(a == b))).abs() < 1e-10);
        }
    }
}

#[test]
fn degenerate_inputs() {
    let ragged = vec![vec![1.0, 2.0], vec![1.0, 2.0], vec![1.0], vec![3.0, 4.0]];
    let params = UmapParams::new(2, 2);
    let error = UmapError::RaggedRows {
        row: 2,
        expected: 2,
        found: 1,
    };
    assert_eq!(reduce(&ragged, &params), Err(error));
    let infinite = vec![
        vec![1.0, 2.0],
        vec![1.0, f32::NAN],
        vec![1.0, 2.0],
        vec![3.0, 4.0],
    ];
    assert_eq!(
        reduce(&infinite, &params),
        Err(UmapError::NonFinite { row: 1 })
    );
    let three = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![1.0, 1.0]];
    let error = UmapError::TooFewPoints {
        points: 3,
        n_components: 2,
    };
    assert_eq!(reduce(&three, &params), Err(error));
    assert!(matches!(
        reduce(&three, &UmapParams::new(1, 1)),
        Err(UmapError::InvalidParameter(_))
    ));
    // Identical points, zero vectors and more neighbours than points give finite layouts.
    for points in [vec![vec![0.5_f32; 8]; 30], vec![vec![0.0_f32; 8]; 30]] {
        let layout = reduce(&points, &UmapParams::new(50, 3)).unwrap();
        assert!(layout.iter().flatten().all(|x| x.is_finite()));
    }
    // RAPTOR's smallest reduction: n − 2 dimensions.
    let layout = reduce(&three, &UmapParams::new(2, 1)).unwrap();
    assert!(layout.iter().flatten().all(|x| x.is_finite()));
}
