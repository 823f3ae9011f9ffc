//! LimitGen: are the generated limitations of a paper about the planted one?
//!
//! Upstream parses up to three limitations from the answer's `{"limitations": [...]}` (inside a
//! json code fence when there is one; anything unreadable becomes one "Invalid Message").
//! For each, a judge says whether it concerns the category's aspect; if so a judge classifies
//! it into the aspect's subtypes; when that is the planted subtype the limitation is accurate
//! and a judge rates it 1–5 against the ground-truth limitation. `accuracy` is whether any is
//! accurate, `rating` the best rating (0 when none). Judge replies are read as upstream reads
//! them, once each (no re-asks).

mod checks;

use async_trait::async_trait;
use mb_upstream::LimitAspect;
use serde_json::{json, Map, Value};

use checks::{AspectCheck, RatingCheck, SubtypeCheck};

use super::scorers::judged;
use super::{EvalError, Evaluator, Graders};
use mb_datasets::Row;

/// The metrics the judge calls serve, named when no judge is configured.
const METRICS: &str = "accuracy, rating";

/// The LimitGen evaluator.
pub struct LimitGenScorer;

/// The aspect a planted category belongs to, with the aspect's subtype labels in the order
/// the classification prompt numbers them.
fn aspect(category: &str) -> Option<(&'static str, &'static [(&'static str, &'static str)])> {
    const METHODOLOGY: &[(&str, &str)] = &[
        (
            "low data quality",
            "the data are collected or prepared unreliably, with bias or too little cleaning",
        ),
        (
            "inappropriate method",
            "a method does not suit the research question and may oversimplify or mislead",
        ),
        (
            "lack of novelty",
            "the work barely changes established techniques",
        ),
        (
            "limited performance",
            "results are weak or do not generalise across data or tasks",
        ),
        ("others", "none of the above"),
    ];
    const EXPERIMENTS: &[(&str, &str)] = &[
        (
            "insufficient baseline",
            "the approach is not compared with enough well-established methods",
        ),
        (
            "limited datasets",
            "too few datasets to show the approach generalises",
        ),
        (
            "inappropriate datasets",
            "the datasets do not reflect the target task or real use",
        ),
        (
            "ablation study",
            "no ablation: a component's contribution is left unclear",
        ),
        ("others", "none of the above"),
    ];
    const RESULTS: &[(&str, &str)] = &[
        (
            "insufficient metric",
            "the evaluation metrics give an incomplete picture",
        ),
        (
            "limited analysis",
            "little insight into the model's behaviour and failures",
        ),
        ("result misalignment", "text and tables or figures disagree"),
        (
            "misleading conclusion",
            "conclusions overstate what the evidence shows",
        ),
        ("others", "none of the above"),
    ];
    const LITERATURE: &[(&str, &str)] = &[
        (
            "limited scope",
            "the review leaves out important work or perspectives",
        ),
        (
            "irrelevant citations",
            "references are irrelevant or outdated",
        ),
        (
            "inaccurate description",
            "existing methods are described inaccurately",
        ),
        ("others", "none of the above"),
    ];
    Some(match category {
        "data" | "inappropriate" => ("methodology", METHODOLOGY),
        "baseline" | "dataset" | "replace" | "ablation" => ("experimental design", EXPERIMENTS),
        "metric" | "analysis" => ("result analysis", RESULTS),
        "citation" | "review" | "description" => ("literature review", LITERATURE),
        _ => return None,
    })
}

/// The subtype label a planted category corresponds to.
fn planted_subtype(category: &str) -> Option<&'static str> {
    Some(match category {
        "ablation" => "ablation study",
        "data" => "low data quality",
        "inappropriate" => "inappropriate method",
        "baseline" => "insufficient baseline",
        "dataset" => "limited datasets",
        "replace" => "inappropriate datasets",
        "review" => "limited scope",
        "citation" => "irrelevant citations",
        "description" => "inaccurate description",
        "metric" => "insufficient metric",
        "analysis" => "limited analysis",
        _ => return None,
    })
}

/// Upstream's `extract_info(r'```json\n(.*?)\n```', text)`: the fenced block, or the text.
fn fenced_json(text: &str) -> &str {
    text.find("```json\n")
        .and_then(|start| {
            let body = &text[start + 8..];
            body.find("\n```").map(|end| &body[..end])
        })
        .unwrap_or(text)
}

/// The limitations of an answer, as upstream reads them.
pub fn limitations(response: &str) -> Vec<String> {
    let text = if response.contains("```json") {
        fenced_json(response)
    } else {
        response
    };
    let invalid = || vec!["Invalid Message".to_string()];
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text) else {
        return invalid();
    };
    match object.get("limitations") {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .take(3)
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect(),
        _ => invalid(),
    }
}

#[async_trait]
impl Evaluator for LimitGenScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let judge = graders.judge;
        let bad = |reason: &str| EvalError::BadItem {
            dataset: row.dataset.clone(),
            test_idx: row.test_idx,
            reason: reason.to_string(),
        };
        let category = row
            .info
            .get("category")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("info has no category"))?;
        let ground_truth = row
            .info
            .get("ground_truth")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (aspect_name, subtypes) =
            aspect(category).ok_or_else(|| bad("unknown LimitGen category"))?;
        let planted = planted_subtype(category).ok_or_else(|| bad("unknown LimitGen category"))?;
        let group = LimitAspect::of(category).ok_or_else(|| bad("unknown LimitGen category"))?;
        let (mut accurate, mut ratings, mut explanations, mut predicted) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for limitation in limitations(response) {
            let (mut acc, mut rating, mut explanation, mut subtype) =
                (false, 0, "N/A".to_string(), "N/A".to_string());
            if judged(
                judge,
                row,
                METRICS,
                &AspectCheck {
                    aspect: aspect_name,
                    group,
                    limitation: &limitation,
                },
            )
            .await?
            {
                subtype = judged(
                    judge,
                    row,
                    METRICS,
                    &SubtypeCheck {
                        subtypes,
                        group,
                        limitation: &limitation,
                    },
                )
                .await?;
                if subtype == planted {
                    acc = true;
                    (rating, explanation) = judged(
                        judge,
                        row,
                        METRICS,
                        &RatingCheck {
                            ground_truth,
                            limitation: &limitation,
                        },
                    )
                    .await?;
                }
            }
            accurate.push(acc);
            ratings.push(rating);
            explanations.push(explanation);
            predicted.push(subtype);
        }
        let mut metrics = Map::new();
        metrics.insert("ground_truth".into(), json!(ground_truth));
        metrics.insert("accuracy_list".into(), json!(accurate));
        metrics.insert("predicted_subtype_list".into(), json!(predicted));
        metrics.insert("ground_truth_subtype".into(), json!(planted));
        metrics.insert("explanation_list".into(), json!(explanations));
        metrics.insert("rating_list".into(), json!(ratings));
        metrics.insert(
            "rating".into(),
            json!(ratings.iter().copied().max().unwrap_or(0)),
        );
        metrics.insert("accuracy".into(), json!(accurate.iter().any(|a| *a)));
        Ok(metrics)
    }

    fn concurrency(&self) -> usize {
        4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limitations_are_read_as_upstream_reads_them() {
        assert_eq!(
            limitations("{\"limitations\": [\"a\", \"b\", \"c\", \"d\"]}"),
            ["a", "b", "c"]
        );
        assert_eq!(
            limitations("Here:\n```json\n{\"limitations\": \"only one\"}\n```"),
            ["only one"]
        );
        assert_eq!(limitations("no json"), ["Invalid Message"]);
        assert_eq!(limitations("[1, 2]"), ["Invalid Message"]);
        assert_eq!(
            limitations("{\"limitations\": [{\"x\": 1}]}"),
            ["{\"x\":1}"]
        );
    }
}
