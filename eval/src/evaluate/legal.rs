//! What JuDGE's merged judge is shown: the rule-based legal metrics of the generated judgment
//! against the expected one (`crate::metrics::legal`, computed with upstream's charge lexicon,
//! so only when the run has an upstream checkout), recorded per item as upstream records them,
//! and written into the judge's prompt as upstream writes them.

use mb_upstream::{judge_fields, Upstream, JUDGE_METRICS};
use serde_json::{Map, Value};

use super::shown::{ShownMetric, NO_BERTSCORE};
use crate::metrics::legal::{judge_scores, LegalScores};

/// Why the legal metrics are missing without a checkout.
pub(super) const NO_LEXICON: &str = "the legal extraction needs upstream's charge lexicon, read from an upstream checkout (--upstream)";

/// Why they are missing when the extraction fails (where upstream's own evaluation raises).
const FAILED: &str = "the legal extraction fails on this text, as upstream's does";

/// Why one is missing where upstream computes `None` (a section, a sentence or a fine absent).
const NONE: &str = "absent from the texts (upstream gives None)";

/// Each metric's meaning, in the order of [`JUDGE_METRICS`].
const MEANINGS: [&str; 10] = [
    "accuracy of the prison term, 0.00 to 1.00",
    "accuracy of the fine, 0.00 to 1.00",
    "share of the true charges the judgment names",
    "share of the named charges that are true",
    "share of the relevant statutes cited",
    "share of the cited statutes that are relevant",
    "METEOR similarity of the judicial reasoning section",
    "BERTScore similarity of the judicial reasoning section",
    "METEOR similarity of the judgment result section",
    "BERTScore similarity of the judgment result section",
];

/// The value of the metric `name` in `scores` (`None` where upstream has `None`).
fn value(scores: &LegalScores, name: &str) -> Option<f64> {
    match name {
        "time_score" => scores.time_score,
        "amount_score" => scores.amount_score,
        "crime_recall" => Some(scores.crime_recall),
        "crime_precision" => Some(scores.crime_precision),
        "penalcode_index_recall" => Some(scores.penalcode_index_recall),
        "penalcode_index_precision" => Some(scores.penalcode_index_precision),
        "reasoning_meteor" => scores.reasoning_meteor,
        "judge_meteor" => scores.judge_meteor,
        _ => None,
    }
}

/// The metrics our wording of the merged judge shows: each computed one with its value, the
/// others with why they are missing (`scores` is why none is computed when it is an error).
pub(super) fn shown(scores: Result<&LegalScores, &'static str>) -> Vec<ShownMetric> {
    JUDGE_METRICS
        .iter()
        .zip(MEANINGS)
        .map(|(name, meaning)| ShownMetric {
            name,
            value: if name.ends_with("bert_score") {
                Err(NO_BERTSCORE)
            } else {
                scores.and_then(|s| value(s, name).ok_or(NONE))
            },
            meaning,
        })
        .collect()
}

/// JuDGE's inputs to its merged judge for one generated judgment.
pub(super) struct JudgeInputs {
    /// The metrics as our wording shows them.
    pub shown: Vec<ShownMetric>,
    /// The metric fields of upstream's prompt.
    pub upstream_fields: Vec<(&'static str, String)>,
    /// What the item's details record: every field upstream's evaluation returns, or why the
    /// extraction failed.
    pub recorded: Map<String, Value>,
}

/// The legal metrics of `generated` against `expected` with the lexicon of `upstream` (none
/// without a checkout), as shown and as recorded.
pub(super) fn judge_inputs(
    upstream: Option<&Upstream>,
    generated: &str,
    expected: &str,
) -> JudgeInputs {
    let Some(upstream) = upstream else {
        return JudgeInputs {
            shown: shown(Err(NO_LEXICON)),
            upstream_fields: judge_fields(&[], None),
            recorded: Map::new(),
        };
    };
    match judge_scores(upstream, generated, expected) {
        Ok(scores) => {
            let recorded = match serde_json::to_value(&scores) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            };
            JudgeInputs {
                shown: shown(Ok(&scores)),
                // Upstream's scores hold every metric (the BERTScores too), so each field is
                // written from `time_score`, as upstream's `get_val` writes it.
                upstream_fields: judge_fields(&JUDGE_METRICS, scores.time_score),
                recorded,
            }
        }
        Err(error) => {
            let mut recorded = Map::new();
            recorded.insert("legal_metrics_error".into(), Value::from(error.to_string()));
            JudgeInputs {
                shown: shown(Err(FAILED)),
                upstream_fields: judge_fields(&[], None),
                recorded,
            }
        }
    }
}
