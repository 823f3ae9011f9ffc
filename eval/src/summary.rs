//! Upstream's summaries: per-metric means for one dataset, and min-max / z-score normalized
//! averages over the datasets of a domain or task.
//!
//! Normalization uses fixed per-group statistics (`configs/datasets/normalization.json`, the
//! values upstream ships), so that scores of different runs and memory systems are comparable.
//! Item values follow upstream: numbers as they are, `true` as 1, anything else (false, null,
//! a missing or non-numeric value) as 0. Min-max scores are not clipped.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::evaluate::{summary_value, EvaluateDetail};
use mb_datasets::{DatasetConfig, DatasetType};

/// Why a summary cannot be computed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SummaryError {
    /// A group with no statistics in the normalization file (upstream raises `KeyError`).
    #[error("no normalization statistics for group {group:?} under {kind} {tag:?}")]
    UnknownGroup {
        /// Group name.
        group: String,
        /// `task` or `domain`.
        kind: String,
        /// The task or domain.
        tag: String,
    },
    /// The statistics file lacks a section or has a non-numeric value.
    #[error("normalization statistics: {0}")]
    Stats(String),
}

/// The fixed statistics of one group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupStats {
    /// Smallest item value seen.
    pub min: f64,
    /// Largest item value seen.
    pub max: f64,
    /// Mean item value.
    pub mu: f64,
    /// Population standard deviation.
    pub sigma: f64,
}

/// The statistics of every group of one task or domain.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalization {
    kind: String,
    tag: String,
    groups: BTreeMap<String, GroupStats>,
}

impl Normalization {
    /// Reads `[kind][tag]["summary"]["dataset_min" | "dataset_max" | "dataset_mu" |
    /// "dataset_sigma"]` from upstream's statistics file.
    pub fn from_reference(
        file: &Value,
        kind: &str,
        tag: &str,
    ) -> Result<Normalization, SummaryError> {
        let summary = &file[kind][tag]["summary"];
        let table = |name: &str| {
            summary[name]
                .as_object()
                .ok_or_else(|| SummaryError::Stats(format!("{kind}.{tag}.summary.{name} missing")))
        };
        let (min, max, mu, sigma) = (
            table("dataset_min")?,
            table("dataset_max")?,
            table("dataset_mu")?,
            table("dataset_sigma")?,
        );
        let mut groups = BTreeMap::new();
        for (group, value) in min {
            let number = |table: &Map<String, Value>, name: &str| {
                table.get(group).and_then(Value::as_f64).ok_or_else(|| {
                    SummaryError::Stats(format!(
                        "{kind}.{tag}.summary.{name}.{group} is not a number"
                    ))
                })
            };
            let min = value.as_f64().ok_or_else(|| {
                SummaryError::Stats(format!(
                    "{kind}.{tag}.summary.dataset_min.{group} is not a number"
                ))
            })?;
            groups.insert(
                group.clone(),
                GroupStats {
                    min,
                    max: number(max, "dataset_max")?,
                    mu: number(mu, "dataset_mu")?,
                    sigma: number(sigma, "dataset_sigma")?,
                },
            );
        }
        Ok(Normalization {
            kind: kind.to_string(),
            tag: tag.to_string(),
            groups,
        })
    }

    /// Upstream's domain/task summary of `(group, value)` items (already sorted by dataset and
    /// test index).
    pub fn summarize(&self, items: &[(String, f64)]) -> Result<Value, SummaryError> {
        #[derive(Default)]
        struct Tally {
            values: Vec<f64>,
            minmax: f64,
            z: f64,
        }
        let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
        for (group, value) in items {
            let stats = self
                .groups
                .get(group)
                .ok_or_else(|| SummaryError::UnknownGroup {
                    group: group.clone(),
                    kind: self.kind.clone(),
                    tag: self.tag.clone(),
                })?;
            let minmax = if stats.max <= stats.min {
                0.0
            } else {
                (value - stats.min) / (stats.max - stats.min)
            };
            let z = if stats.sigma <= 1e-6 {
                0.0
            } else {
                (value - stats.mu) / stats.sigma
            };
            let tally = tallies.entry(group.as_str()).or_default();
            tally.values.push(*value);
            tally.minmax += minmax;
            tally.z += z;
        }
        let count = items.len() as f64;
        let mean = |sum: f64, n: usize| if n == 0 { 0.0 } else { sum / n as f64 };
        let mut average = Map::new();
        let mut minmax = Map::new();
        let mut z = Map::new();
        let mut details = Map::new();
        let (mut macro_sum, mut minmax_total, mut z_total) = (0.0, 0.0, 0.0);
        for (group, tally) in &tallies {
            let n = tally.values.len();
            average.insert(group.to_string(), json!(mean(tally.values.iter().sum(), n)));
            minmax.insert(
                group.to_string(),
                json!([tally.minmax, n, mean(tally.minmax, n)]),
            );
            z.insert(group.to_string(), json!([tally.z, n, mean(tally.z, n)]));
            details.insert(group.to_string(), json!(tally.values));
            macro_sum += mean(tally.minmax, n);
            minmax_total += tally.minmax;
            z_total += tally.z;
        }
        Ok(json!({
            "summary": {
                "average": mean(macro_sum, tallies.len()),
                "weighted_average": if count > 0.0 { minmax_total / count } else { 0.0 },
                "z_score": if count > 0.0 { z_total / count } else { 0.0 },
            },
            "average": average,
            "minmax_normalized_average": minmax,
            "z_normalized_average": z,
            "details": details,
        }))
    }
}

/// The normalization statistics shipped in `configs/datasets/normalization.json` (upstream's
/// reference values plus the built-in sample's identity statistics), built into the binary.
pub fn builtin_statistics() -> Result<Value, SummaryError> {
    serde_json::from_str(include_str!("../../configs/datasets/normalization.json"))
        .map_err(|e| SummaryError::Stats(format!("configs/datasets/normalization.json: {e}")))
}

/// Upstream's `summary_results` for a whole run: the single-dataset summary (mean of each
/// test metric) for `single`, the normalized summary with the statistics of `kind`/`name`
/// from `stats_file` for domains and tasks. `details` may come in any order.
pub fn summarize_run(
    kind: DatasetType,
    name: &str,
    configs: &[DatasetConfig],
    details: &[EvaluateDetail],
    stats_file: &Value,
) -> Result<Value, SummaryError> {
    let config_of = |dataset: &str| {
        configs
            .iter()
            .find(|c| c.dataset_name == dataset)
            .ok_or_else(|| {
                SummaryError::Stats(format!(
                    "details name dataset {dataset:?}, which the run does not cover"
                ))
            })
    };
    if kind == DatasetType::Single {
        let config = configs.first().ok_or_else(|| {
            SummaryError::Stats("a single-dataset run without its dataset".into())
        })?;
        let items: Vec<Map<String, Value>> = details.iter().map(|d| d.metrics.clone()).collect();
        let metrics: Vec<&str> = config.test_metrics.iter().map(String::as_str).collect();
        return Ok(single_summary(&items, &metrics));
    }
    let mut sorted: Vec<&EvaluateDetail> = details.iter().collect();
    sorted.sort_by(|a, b| (&a.dataset, a.test_idx).cmp(&(&b.dataset, b.test_idx)));
    let items = sorted
        .into_iter()
        .map(|detail| {
            let config = config_of(&detail.dataset)?;
            Ok((
                group_name(&detail.dataset).to_string(),
                item_value(summary_value(config, &detail.metrics)),
            ))
        })
        .collect::<Result<Vec<_>, SummaryError>>()?;
    Normalization::from_reference(stats_file, kind.as_str(), name)?.summarize(&items)
}

/// The summary group of a dataset: `Locomo-N` → `Locomo`, others keep their name.
pub fn group_name(dataset: &str) -> &str {
    match dataset.strip_prefix("Locomo-") {
        Some(n) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => "Locomo",
        _ => dataset,
    }
}

/// An item's value as upstream counts it: numbers as they are, `true` as 1, anything else 0.
pub fn item_value(value: Option<&Value>) -> f64 {
    match value {
        Some(Value::Bool(true)) => 1.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Upstream's single-dataset summary: the mean item value of each metric.
pub fn single_summary(items: &[Map<String, Value>], metrics: &[&str]) -> Value {
    let mut summary = Map::new();
    for metric in metrics {
        let total: f64 = items.iter().map(|item| item_value(item.get(*metric))).sum();
        let mean = if items.is_empty() {
            0.0
        } else {
            total / items.len() as f64
        };
        summary.insert(metric.to_string(), json!(mean));
    }
    json!({ "summary": summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> Normalization {
        let file = json!({"task": {"Toy": {"summary": {
            "dataset_min": {"Locomo": 0.0, "NFCats": 1},
            "dataset_max": {"Locomo": 1.0, "NFCats": 5},
            "dataset_mu": {"Locomo": 0.5, "NFCats": 4.0},
            "dataset_sigma": {"Locomo": 0.25, "NFCats": 0.0}
        }}}});
        Normalization::from_reference(&file, "task", "Toy").unwrap()
    }

    #[test]
    fn domain_summary_by_hand() {
        let items = vec![
            ("Locomo".to_string(), 1.0),
            ("Locomo".to_string(), 0.5),
            ("NFCats".to_string(), 5.0),
        ];
        let s = stats().summarize(&items).unwrap();
        // Locomo min-max: 1.0 and 0.5 → sum 1.5, mean 0.75; NFCats: (5-1)/4 = 1.0.
        assert_eq!(
            s["minmax_normalized_average"]["Locomo"],
            json!([1.5, 2, 0.75])
        );
        assert_eq!(
            s["minmax_normalized_average"]["NFCats"],
            json!([1.0, 1, 1.0])
        );
        // Macro over groups (0.75 + 1.0)/2; micro (1.5 + 1.0)/3.
        assert_eq!(s["summary"]["average"], json!(0.875));
        assert!((s["summary"]["weighted_average"].as_f64().unwrap() - 2.5 / 3.0).abs() < 1e-12);
        // z: Locomo (1-0.5)/0.25 = 2, (0.5-0.5)/0.25 = 0; NFCats sigma 0 → 0. Micro 2/3.
        assert_eq!(s["z_normalized_average"]["Locomo"], json!([2.0, 2, 1.0]));
        assert!((s["summary"]["z_score"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s["average"]["Locomo"], json!(0.75));
        assert_eq!(s["details"]["NFCats"], json!([5.0]));
    }

    #[test]
    fn unknown_groups_and_item_values() {
        let error = stats()
            .summarize(&[("JuDGE".to_string(), 1.0)])
            .unwrap_err();
        assert!(error.to_string().contains("JuDGE"));
        assert_eq!(item_value(Some(&json!(true))), 1.0);
        assert_eq!(item_value(Some(&json!(false))), 0.0);
        assert_eq!(item_value(Some(&json!("7"))), 0.0);
        assert_eq!(item_value(None), 0.0);
        assert_eq!(item_value(Some(&json!(0.25))), 0.25);
        assert_eq!(group_name("Locomo-7"), "Locomo");
        assert_eq!(group_name("DialSim-friends"), "DialSim-friends");
        let items: Vec<Map<String, Value>> = vec![
            json!({"f1": 1.0, "ok": true}).as_object().unwrap().clone(),
            json!({"f1": 0.5, "ok": null}).as_object().unwrap().clone(),
        ];
        assert_eq!(
            single_summary(&items, &["f1", "ok"]),
            json!({"summary": {"f1": 0.75, "ok": 0.5}})
        );
    }

    #[test]
    fn reads_the_shipped_statistics() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs/datasets/normalization.json"
        );
        let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let locomo = Normalization::from_reference(&file, "task", "Long-Short").unwrap();
        let stats = locomo.groups["Locomo"];
        assert_eq!((stats.min, stats.max), (0.0, 1.0));
        assert!(Normalization::from_reference(&file, "task", "Nope").is_err());
    }
}
