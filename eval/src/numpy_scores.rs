//! Upstream's summaries and the scores its Python holds as numpy numbers.
//!
//! Upstream's `summary_results` counts an item's value only when its type is exactly `int` or
//! `float` (`true` as 1), anything else as 0; and upstream computes LoCoMo's multi-hop
//! (category 1) F1 as a numpy mean, a `numpy.float64`. So the summary every upstream regime
//! writes, made in the process that scored the answers, counts every multi-hop answer 0, while
//! a summary of `evaluate_details.json` read back (its `src/evaluate.py`, `single_summary.py`)
//! counts them. [`NumpyScores`] chooses which of the two a summary is.

use mb_datasets::Dataset;
use serde_json::Value;

use crate::evaluate::EvaluateDetail;

/// How a summary counts the scores upstream computes as numpy numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NumpyScores {
    /// As 0: upstream's summary made where the answers were scored (every regime's).
    #[default]
    AsZero,
    /// As their values: upstream's summary of the details read back from JSON.
    Counted,
}

impl NumpyScores {
    /// `details` as this summary counts them: with [`NumpyScores::AsZero`], every value
    /// [`numpy_metric`] names is 0.
    pub fn apply(self, datasets: &[Dataset], details: &[EvaluateDetail]) -> Vec<EvaluateDetail> {
        let mut counted = details.to_vec();
        if self == NumpyScores::Counted {
            return counted;
        }
        for detail in &mut counted {
            let Some(dataset) = datasets.iter().find(|d| d.name() == detail.dataset) else {
                continue;
            };
            if let Some(metric) = numpy_metric(dataset, detail) {
                detail.metrics.insert(metric.into(), Value::from(0));
            }
        }
        counted
    }
}

/// The metric of `detail` (a score of a row of `dataset`) that upstream computes as a numpy
/// number, if any: a LoCoMo multi-hop (category 1) answer's F1 (found by its row's category).
pub fn numpy_metric(dataset: &Dataset, detail: &EvaluateDetail) -> Option<&'static str> {
    if !dataset.config.class_name.starts_with("Locomo") || !detail.metrics.contains_key("f1") {
        return None;
    }
    let category = dataset
        .row(detail.test_idx)
        .and_then(|(_, row)| row.info.get("category"))
        .and_then(Value::as_u64);
    (category == Some(1)).then_some("f1")
}

#[cfg(test)]
mod tests {
    use mb_datasets::catalog::{Catalog, DatasetType};
    use mb_datasets::sample::sample_source;
    use serde_json::{json, Map};

    use super::*;

    #[test]
    fn only_locomo_multi_hop_f1_counts_zero_where_it_was_scored() {
        let source = sample_source().unwrap();
        let catalog = Catalog::builtin().unwrap();
        let datasets = mb_datasets::load(&source, &catalog, DatasetType::Domain, "Sample").unwrap();
        let details: Vec<EvaluateDetail> = datasets
            .iter()
            .flat_map(|d| d.train.iter().chain(&d.test).map(move |row| (d, row)))
            .map(|(d, row)| {
                let metric = if d.name() == "Sample-Locomo" {
                    "f1"
                } else {
                    "meteor"
                };
                let mut metrics = Map::new();
                metrics.insert(metric.into(), json!(0.5));
                EvaluateDetail {
                    test_idx: row.test_idx,
                    metrics,
                    dataset: d.name().to_string(),
                }
            })
            .collect();
        let category = |detail: &EvaluateDetail| {
            let dataset = datasets
                .iter()
                .find(|d| d.name() == detail.dataset)
                .unwrap();
            dataset
                .row(detail.test_idx)
                .unwrap()
                .1
                .info
                .get("category")
                .cloned()
        };
        let zeroed = NumpyScores::AsZero.apply(&datasets, &details);
        let mut multi_hop = 0;
        for (before, after) in details.iter().zip(&zeroed) {
            if before.dataset == "Sample-Locomo" && category(before) == Some(json!(1)) {
                multi_hop += 1;
                assert_eq!(after.metrics["f1"], json!(0));
            } else {
                assert_eq!(after, before);
            }
        }
        assert!(multi_hop > 0);
        assert_eq!(NumpyScores::Counted.apply(&datasets, &details), details);
    }
}
