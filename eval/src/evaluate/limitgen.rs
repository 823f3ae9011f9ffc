//! LimitGen: are the generated limitations of a paper about the planted one?
//!
//! Upstream parses up to three limitations from the answer's `{"limitations": [...]}` (inside a
//! json code fence when there is one; anything unreadable becomes one "Invalid Message").
//! For each, a judge says whether it concerns the category's aspect; if so a judge classifies
//! it into the aspect's subtypes; when that is the planted subtype the limitation is accurate
//! and a judge rates it 1–5 against the ground-truth limitation. `accuracy` is whether any is
//! accurate, `rating` the best rating (0 when none). Judge replies are read as upstream reads
//! them, once each (no re-asks).

use async_trait::async_trait;
use mb_core::Lang;
use mb_llm::ops::{Backend, Operation, Patience};
use mb_llm::{extract_json, Message, Sampling};
use serde_json::{json, Map, Value};

use super::scorers::judged;
use super::{EvalError, Evaluator};
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

fn judge_sampling() -> Sampling {
    Sampling::new(0.8, 0.1, 4096)
}

/// Is a limitation about the aspect? (A reply starting with "yes".)
struct AspectCheck<'a> {
    aspect: &'a str,
    limitation: &'a str,
}

impl Operation for AspectCheck<'_> {
    type Output = bool;

    fn name(&self) -> &'static str {
        "judge_limitation_aspect"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![
            Message::system(format!(
                "Does the following limitation of a scientific paper concern its {}? Answer \"yes\" or \"no\" only.",
                self.aspect
            )),
            Message::user(self.limitation),
        ]
    }

    fn sampling(&self) -> Sampling {
        judge_sampling()
    }

    fn parse(&self, text: &str) -> Option<bool> {
        Some(text.to_lowercase().starts_with("yes"))
    }

    /// LimitGen's evaluation is tried up to five times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 5 }
    }

    fn fallback(&self) -> bool {
        false
    }

    fn offline(&self, _lang: Lang) -> bool {
        self.fallback()
    }
}

/// Which subtype of the aspect is a limitation? (The label of the reply's leading number, or
/// the reply itself, as upstream keeps it.)
struct SubtypeCheck<'a> {
    subtypes: &'a [(&'a str, &'a str)],
    limitation: &'a str,
}

impl Operation for SubtypeCheck<'_> {
    type Output = String;

    fn name(&self) -> &'static str {
        "judge_limitation_subtype"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        let list: String = self
            .subtypes
            .iter()
            .enumerate()
            .map(|(i, (label, description))| format!("{}. {label}: {description}\n", i + 1))
            .collect();
        vec![
            Message::system(format!(
                "Which of these kinds is the following limitation of a scientific paper?\n{list}\nAnswer with the number only."
            )),
            Message::user(self.limitation),
        ]
    }

    fn sampling(&self) -> Sampling {
        judge_sampling()
    }

    fn parse(&self, text: &str) -> Option<String> {
        let label = text
            .trim()
            .chars()
            .next()
            .and_then(|c| c.to_digit(10))
            .and_then(|n| (n as usize).checked_sub(1))
            .and_then(|i| self.subtypes.get(i))
            .map(|(label, _)| label.to_string());
        Some(label.unwrap_or_else(|| text.to_string()))
    }

    /// LimitGen's evaluation is tried up to five times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 5 }
    }

    fn fallback(&self) -> String {
        String::new()
    }

    fn offline(&self, _lang: Lang) -> String {
        self.fallback()
    }
}

/// How close is an accurate limitation to the ground truth? (`{"explanation", "rating"}`;
/// unreadable: rating 0, "Invalid Message".)
struct RatingCheck<'a> {
    ground_truth: &'a str,
    limitation: &'a str,
}

impl Operation for RatingCheck<'_> {
    type Output = (i64, String);

    fn name(&self) -> &'static str {
        "judge_limitation_rating"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![
            Message::system(
                "Rate how closely a generated limitation of a scientific paper matches the true one, \
                 from 1 to 5: 5 the same point in as much detail; 4 the same point with less detail; \
                 3 related but different; 2 loosely related; 1 unrelated. Reply with JSON: \
                 {\"explanation\": \"<brief>\", \"rating\": <1-5>}.",
            ),
            Message::user(format!(
                "True limitation:\n{}\n\nGenerated limitation:\n{}\n\nExplain briefly, then rate (1-5).",
                self.ground_truth, self.limitation
            )),
        ]
    }

    fn sampling(&self) -> Sampling {
        judge_sampling()
    }

    fn parse(&self, text: &str) -> Option<(i64, String)> {
        let parsed = serde_json::from_str::<Value>(fenced_json(text))
            .ok()
            .or_else(|| extract_json(text));
        let rating = parsed.as_ref().and_then(|v| match &v["rating"] {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        });
        Some(match (rating, parsed) {
            (Some(rating), Some(v)) => (
                rating,
                v["explanation"].as_str().unwrap_or_default().to_string(),
            ),
            _ => self.fallback(),
        })
    }

    /// LimitGen's evaluation is tried up to five times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 5 }
    }

    fn fallback(&self) -> (i64, String) {
        (0, "Invalid Message".to_string())
    }

    fn offline(&self, _lang: Lang) -> (i64, String) {
        self.fallback()
    }
}

#[async_trait]
impl Evaluator for LimitGenScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        judge: &Backend,
    ) -> Result<Map<String, Value>, EvalError> {
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

    /// LimitGen's judge checks never panic on hostile replies (`MB_FUZZ_CASES` runs more).
    #[test]
    fn hostile_replies_never_panic_a_check() {
        let subtypes = [("data", "too little data"), ("method", "weak baseline")];
        let aspect = AspectCheck {
            aspect: "data",
            limitation: "small sample",
        };
        let subtype = SubtypeCheck {
            subtypes: &subtypes,
            limitation: "small sample",
        };
        let rating = RatingCheck {
            ground_truth: "the sample is small",
            limitation: "small sample",
        };
        let mut texts = mb_llm::testing::HostileText::new(61);
        for _ in 0..mb_llm::testing::fuzz_cases(2_000) {
            let reply = texts.next_text();
            let _ = aspect.parse(&reply);
            let _ = subtype.parse(&reply);
            let _ = rating.parse(&reply);
        }
    }

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

    #[test]
    fn subtype_numbers_map_to_labels() {
        let (_, subtypes) = aspect("dataset").unwrap();
        let check = SubtypeCheck {
            subtypes,
            limitation: "l",
        };
        assert_eq!(
            check.parse(" 2. Limited datasets").as_deref(),
            Some("limited datasets")
        );
        assert_eq!(check.parse("9").as_deref(), Some("9"));
        assert_eq!(
            check.parse("Limited datasets").as_deref(),
            Some("Limited datasets")
        );
        assert_eq!(planted_subtype("dataset"), Some("limited datasets"));
        let rating = RatingCheck {
            ground_truth: "g",
            limitation: "l",
        };
        assert_eq!(
            rating.parse("```json\n{\"explanation\": \"close\", \"rating\": 4}\n```"),
            Some((4, "close".into()))
        );
        assert_eq!(rating.parse("no idea"), Some((0, "Invalid Message".into())));
    }
}
