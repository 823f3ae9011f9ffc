//! RAPTOR's keys in its settings file (`configs/memory/raptor.toml`): the vendored library's
//! defaults, which upstream's configuration leaves in place, and the seed of the UMAP layouts
//! that upstream leaves unset.

use serde::{Deserialize, Serialize};

use crate::cluster::layers::Grouping;
use crate::settings::OwnSettings;

/// Most tokens a context may be given (a bound on the file's value, far above any model's).
const MAX_CONTEXT_TOKENS: usize = 1_000_000;

/// RAPTOR's own settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct RaptorSettings {
    /// The seed of the UMAP layouts (upstream's run unseeded, differing from run to run).
    pub umap_seed: u64,
    /// The dimension UMAP reduces embeddings to (`reduction_dimension`).
    pub reduction_dimension: usize,
    /// The probability a node's cluster must exceed for the node to join it (`threshold`).
    pub threshold: f64,
    /// The most tokens a group may hold before it is clustered again
    /// (`max_length_in_cluster`).
    pub max_cluster_tokens: usize,
    /// The most tokens of the retrieved context (`retrieve(max_tokens=...)`).
    pub context_tokens: usize,
}

impl Default for RaptorSettings {
    fn default() -> Self {
        let grouping = Grouping::default();
        RaptorSettings {
            umap_seed: grouping.seed,
            reduction_dimension: grouping.dimension,
            threshold: grouping.threshold,
            max_cluster_tokens: grouping.max_tokens,
            context_tokens: 3500,
        }
    }
}

impl RaptorSettings {
    /// How the tree's layers are grouped.
    pub fn grouping(&self) -> Grouping {
        Grouping {
            dimension: self.reduction_dimension,
            threshold: self.threshold,
            max_tokens: self.max_cluster_tokens,
            seed: self.umap_seed,
            ..Grouping::default()
        }
    }
}

impl OwnSettings for RaptorSettings {
    fn check(&self) -> Result<(), String> {
        if !(2..=100).contains(&self.reduction_dimension) {
            return Err(format!(
                "reduction_dimension = {}: must be from 2 to 100",
                self.reduction_dimension
            ));
        }
        if !(self.threshold.is_finite() && (0.0..1.0).contains(&self.threshold)) {
            return Err(format!(
                "threshold = {}: must be a number from 0 to below 1",
                self.threshold
            ));
        }
        if self.max_cluster_tokens == 0 {
            return Err("max_cluster_tokens = 0: must be at least 1".into());
        }
        if !(1..=MAX_CONTEXT_TOKENS).contains(&self.context_tokens) {
            return Err(format!(
                "context_tokens = {}: must be from 1 to {MAX_CONTEXT_TOKENS}",
                self.context_tokens
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::get;

    #[test]
    fn the_shipped_file_holds_the_defaults_and_bad_values_are_refused_by_key() {
        let shipped = get("raptor").unwrap().settings(None).unwrap();
        assert_eq!(
            shipped.own::<RaptorSettings>().unwrap(),
            RaptorSettings::default()
        );
        assert_eq!(shipped.retrieve_k(), 10);
        let dir = tempfile::tempdir().unwrap();
        for (line, key) in [
            ("threshold = nan", "threshold"),
            ("threshold = 1.0", "threshold"),
            ("reduction_dimension = 1", "reduction_dimension"),
            ("max_cluster_tokens = 0", "max_cluster_tokens"),
            ("context_tokens = 99999999", "context_tokens"),
        ] {
            let file = dir.path().join("raptor.toml");
            std::fs::write(&file, format!("{line}\n")).unwrap();
            let error = get("raptor")
                .unwrap()
                .settings(Some(&file))
                .unwrap_err()
                .to_string();
            assert!(error.contains(key), "{line}: {error}");
        }
    }
}
