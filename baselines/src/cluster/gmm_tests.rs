//! The mixtures against scikit-learn's, run by upstream's own `cluster_utils.py` in the
//! differential venv: the same BIC for every number of clusters up to a third of the points,
//! the same choice, the same probabilities and cluster memberships.

use super::*;
use crate::cluster::{gmm_cluster, optimal_clusters, MAX_CLUSTERS};
use mb_datasets::PyRandom;
use serde_json::{json, Value};

/// Upstream's `get_optimal_clusters` and `GMM_cluster`, with scikit-learn's BIC per count and
/// the final mixture's probabilities, for each case on standard input.
const CLUSTER_UTILS_PY: &str = r#"
import json, types
import numpy as np
# cluster_utils builds a tokenizer in a default argument; GMM never uses it.
sys.modules["tiktoken"] = types.SimpleNamespace(get_encoding=lambda name: None)
package = types.ModuleType("raptor")
package.__path__ = [root + "/baselines/raptor/raptor"]
sys.modules["raptor"] = package
from raptor.cluster_utils import get_optimal_clusters, GMM_cluster
from sklearn.mixture import GaussianMixture
out = []
for case in json.load(sys.stdin):
    X = np.array(case["points"], dtype=np.float64)
    bics = []
    for n in range(1, min(50, len(X))):
        try:
            gm = GaussianMixture(n_components=n, random_state=224, reg_covar=1e-4).fit(X)
            bics.append(float(gm.bic(X)))
        except Exception:
            bics.append(None)
    labels, count = GMM_cluster(X, case["threshold"])
    proba = GaussianMixture(n_components=int(count), random_state=0).fit(X).predict_proba(X)
    out.append({
        "optimal": int(get_optimal_clusters(X)),
        "bics": bics,
        "labels": [[int(c) for c in row] for row in labels],
        "count": int(count),
        "proba": proba.tolist(),
    })
print(json.dumps(out))
"#;

/// `n` points per centre, spread `sigma` around it, from a seeded generator.
fn blobs(centres: &[Vec<f64>], n: usize, sigma: f64, seed: u64) -> Vec<Vec<f64>> {
    let mut random = PyRandom::new(seed);
    let mut gauss = move || {
        let (u, v) = (random.random().max(1e-300), random.random());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    centres
        .iter()
        .flat_map(|c| (0..n).map(|_| c.clone()).collect::<Vec<_>>())
        .map(|c| c.into_iter().map(|x| x + sigma * gauss()).collect())
        .collect()
}

fn cases() -> Vec<(Vec<Vec<f64>>, f64)> {
    let far: Vec<Vec<f64>> = (0..3)
        .map(|c| (0..10).map(|j| if j == c { 8.0 } else { 0.0 }).collect())
        .collect();
    let near: Vec<Vec<f64>> = vec![vec![0.0; 4], vec![1.5, 0.0, 0.0, 0.0]];
    vec![
        (blobs(&far, 20, 1.0, 1), 0.1),
        (blobs(&near, 15, 1.0, 2), 0.1),
        (blobs(&far[..1], 12, 0.5, 3), 0.1),
        (blobs(&far, 6, 2.0, 4), 0.3),
    ]
}

#[test]
fn mixtures_equal_scikit_learns_through_upstreams_cluster_utils() {
    let Some(side) = mb_core::test_data::UpstreamPython::find() else {
        return;
    };
    let cases = cases();
    let input: Vec<Value> = cases
        .iter()
        .map(|(points, threshold)| json!({"points": points, "threshold": threshold}))
        .collect();
    let theirs = mb_core::test_data::run_json(
        &mut side.script(CLUSTER_UTILS_PY),
        &Value::from(input).to_string(),
    );
    for (case, ((points, threshold), theirs)) in
        cases.iter().zip(theirs.as_array().unwrap()).enumerate()
    {
        for (i, expected) in theirs["bics"].as_array().unwrap().iter().enumerate() {
            let params = GmmParams {
                components: i + 1,
                seed: 224,
                reg_covar: 1e-4,
            };
            let ours = GaussianMixture::fit(points, params).map(|m| m.bic(points));
            match (expected.as_f64(), ours) {
                // With under three points per component, k-means++ meets candidates whose
                // potentials differ in the last bit, which BLAS's summation order decides.
                (Some(_), Ok(_)) if i + 1 > points.len() / 3 => {}
                (Some(expected), Ok(ours)) => assert!(
                    (expected - ours).abs() <= 1e-6 * expected.abs().max(1.0),
                    "case {case}, {} components: BIC {ours} against {expected}",
                    i + 1
                ),
                (None, Err(_)) => {}
                (expected, ours) => panic!(
                    "case {case}, {} components: {expected:?} against {ours:?}",
                    i + 1
                ),
            }
        }
        assert_eq!(
            optimal_clusters(points, MAX_CLUSTERS) as u64,
            theirs["optimal"].as_u64().unwrap(),
            "case {case}"
        );
        let (labels, count) = gmm_cluster(points, *threshold);
        assert_eq!(
            count as u64,
            theirs["count"].as_u64().unwrap(),
            "case {case}"
        );
        let expected: Vec<Vec<usize>> = serde_json::from_value(theirs["labels"].clone()).unwrap();
        assert_eq!(labels, expected, "case {case}");
        let params = GmmParams {
            components: count,
            seed: 0,
            reg_covar: 1e-6,
        };
        let proba = GaussianMixture::fit(points, params)
            .unwrap()
            .predict_proba(points);
        let expected: Vec<Vec<f64>> = serde_json::from_value(theirs["proba"].clone()).unwrap();
        for (ours, theirs) in proba.iter().flatten().zip(expected.iter().flatten()) {
            assert!(
                (ours - theirs).abs() < 1e-6,
                "case {case}: {ours} against {theirs}"
            );
        }
    }
}

#[test]
fn too_few_points_and_degenerate_covariances_are_errors() {
    let params = GmmParams {
        components: 3,
        seed: 0,
        reg_covar: 0.0,
    };
    assert!(matches!(
        GaussianMixture::fit(&[vec![1.0], vec![2.0]], params),
        Err(GmmError::TooFewPoints {
            points: 2,
            components: 3
        })
    ));
    // Identical points without regularization: no covariance to invert.
    let same = vec![vec![0.0, 0.0]; 5];
    let params = GmmParams {
        components: 1,
        seed: 0,
        reg_covar: 0.0,
    };
    assert_eq!(
        GaussianMixture::fit(&same, params).unwrap_err(),
        GmmError::IllDefinedCovariance
    );
    // With it, one tight cluster.
    let (labels, count) = gmm_cluster(&same, 0.1);
    assert_eq!((count, labels), (1, vec![vec![0]; 5]));
}
