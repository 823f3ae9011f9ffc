//! How RAPTOR groups one layer of its tree (upstream's `gmm_perform_clustering` and
//! `RAPTOR_Clustering.perform_clustering`): a global UMAP reduction and mixture, then within
//! each global cluster a local one, and any group whose text is too long clustered again.
//!
//! Upstream's UMAP runs unseeded (its layouts differ from run to run); ours is seeded, so a
//! tree is rebuilt the same. Everything else follows upstream, including its quirks: a node
//! whose every cluster probability is at the threshold or below belongs to no group (and leaves
//! the layer), and local memberships are mapped back by equal embeddings, so nodes with the
//! same embedding share them.

use std::collections::HashMap;

use super::gmm_cluster;
use super::umap::{reduce, UmapError, UmapParams};

/// How a layer is grouped (upstream's defaults in [`Grouping::default`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grouping {
    /// The reduced dimension (`reduction_dimension`).
    pub dimension: usize,
    /// The probability a node's cluster must exceed (`threshold`).
    pub threshold: f64,
    /// The most tokens a group may hold before it is clustered again
    /// (`max_length_in_cluster`).
    pub max_tokens: usize,
    /// Reclusterings at most, one inside the other (upstream stops at depth 100).
    pub max_depth: usize,
    /// The seed of the UMAP layouts.
    pub seed: u64,
}

impl Default for Grouping {
    fn default() -> Self {
        Grouping {
            dimension: 10,
            threshold: 0.1,
            max_tokens: 3500,
            max_depth: 100,
            seed: 224,
        }
    }
}

/// The groups of a layer's nodes (indices into `embeddings`, each with its text's `tokens`), in
/// upstream's order: by label, reclustered groups in place of the group they came from.
pub fn group(
    embeddings: &[Vec<f32>],
    tokens: &[usize],
    grouping: &Grouping,
) -> Result<Vec<Vec<usize>>, UmapError> {
    let all: Vec<usize> = (0..embeddings.len()).collect();
    group_nodes(embeddings, tokens, grouping, &all, 0)
}

fn group_nodes(
    embeddings: &[Vec<f32>],
    tokens: &[usize],
    grouping: &Grouping,
    nodes: &[usize],
    depth: usize,
) -> Result<Vec<Vec<usize>>, UmapError> {
    let points: Vec<Vec<f32>> = nodes.iter().map(|&i| embeddings[i].clone()).collect();
    let labels = labels_of(&points, grouping)?;
    let mut distinct: Vec<usize> = labels.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut groups = Vec::new();
    for label in distinct {
        let members: Vec<usize> = labels
            .iter()
            .zip(nodes)
            .filter(|(l, _)| l.contains(&label))
            .map(|(_, &node)| node)
            .collect();
        let length: usize = members.iter().map(|&m| tokens[m]).sum();
        if members.len() >= 3 && length > grouping.max_tokens && depth < grouping.max_depth {
            groups.extend(group_nodes(
                embeddings,
                tokens,
                grouping,
                &members,
                depth + 1,
            )?);
        } else {
            groups.push(members);
        }
    }
    Ok(groups)
}

/// Each point's cluster labels (upstream's `gmm_perform_clustering`).
fn labels_of(points: &[Vec<f32>], grouping: &Grouping) -> Result<Vec<Vec<usize>>, UmapError> {
    let n = points.len();
    if n < 3 {
        return Ok(vec![vec![0]; n]);
    }
    let neighbours = ((n - 1) as f64).sqrt().floor().max(2.0) as usize;
    let global_dimension = grouping.dimension.min(n - 2);
    let global = reduced(points, neighbours, global_dimension, grouping.seed)?;
    let (global_labels, global_count) = gmm_cluster(&global, grouping.threshold);
    let twins = equal_rows(points);
    let mut labels: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut total = 0;
    for cluster in 0..global_count {
        let members: Vec<usize> = (0..n)
            .filter(|&i| global_labels[i].contains(&cluster))
            .collect();
        if members.is_empty() {
            continue;
        }
        let (local_labels, local_count) = if members.len() <= grouping.dimension + 1 {
            (vec![vec![0]; members.len()], 1)
        } else {
            let local_points: Vec<Vec<f32>> = members.iter().map(|&i| points[i].clone()).collect();
            let neighbours = (members.len() - 1).clamp(2, 10);
            let local = reduced(&local_points, neighbours, grouping.dimension, grouping.seed)?;
            gmm_cluster(&local, grouping.threshold)
        };
        for local in 0..local_count {
            for (position, &member) in members.iter().enumerate() {
                if !local_labels[position].contains(&local) {
                    continue;
                }
                // Upstream finds the member again by its embedding: equal rows share labels.
                for &i in &twins[member] {
                    labels[i].push(local + total);
                }
            }
        }
        total += local_count;
    }
    Ok(labels)
}

/// For each point, every point with an equal embedding (itself included), in order: found once
/// by the rows' bits, not by comparing every pair per cluster.
fn equal_rows(points: &[Vec<f32>]) -> Vec<Vec<usize>> {
    let mut by_bits: HashMap<Vec<u32>, Vec<usize>> = HashMap::new();
    let keys: Vec<Vec<u32>> = points
        .iter()
        // -0.0 equals 0.0 as upstream's `==` compares them.
        .map(|p| {
            p.iter()
                .map(|&v| if v == 0.0 { 0 } else { v.to_bits() })
                .collect()
        })
        .collect();
    for (i, key) in keys.iter().enumerate() {
        by_bits.entry(key.clone()).or_default().push(i);
    }
    keys.iter()
        .map(|key| by_bits.get(key).cloned().unwrap_or_default())
        .collect()
}

/// `points` reduced by UMAP with cosine distances, seeded.
fn reduced(
    points: &[Vec<f32>],
    neighbours: usize,
    dimension: usize,
    seed: u64,
) -> Result<Vec<Vec<f64>>, UmapError> {
    let mut params = UmapParams::new(neighbours, dimension);
    params.seed = seed;
    reduce(points, &params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_embeddings_are_twins_as_upstreams_equality_finds_them() {
        let points = vec![
            vec![1.0, 0.0],
            vec![2.0, 0.5],
            vec![1.0, -0.0],
            vec![2.0, 0.5],
        ];
        assert_eq!(
            equal_rows(&points),
            vec![vec![0, 2], vec![1, 3], vec![0, 2], vec![1, 3]]
        );
    }
}
