//! The evaluators of upstream's dataset classes.

use async_trait::async_trait;
use jieba_rs::Jieba;
use mb_llm::ops::{Backend, Operation};
use serde_json::{json, Map, Value};

use super::judges::{ChecklistJudge, CriticJudge, MatchJudge, RubricJudge};
use super::legal::judge_inputs;
use super::merged::{MergedRubric, OverallJudge};
use super::{EvalError, Evaluator, Graders};
use crate::metrics::judged::dialsim_exact_match;
use crate::metrics::locomo::{locomo_f1, Options};
use crate::metrics::meteor::meteor_text;
use crate::metrics::rouge::lexeval_rouge_l;
use crate::metrics::tokenize::word_tokenize;
use mb_datasets::Row;

/// Key of the merged judge score domain and task summaries use for multi-metric datasets.
pub const MERGED_SCORE: &str = "llm_as_judge_score";

/// Upstream's text of an `info` value: strings as they are, numbers as Python's `str` prints
/// them, anything else as JSON.
fn info_text(row: &Row, key: &str) -> Result<String, EvalError> {
    match row.info.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(other) if !other.is_null() => Ok(other.to_string()),
        _ => Err(bad(row, format!("info has no {key}"))),
    }
}

fn bad(row: &Row, reason: String) -> EvalError {
    EvalError::BadItem {
        dataset: row.dataset.clone(),
        test_idx: row.test_idx,
        reason,
    }
}

fn metrics(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Runs a judge operation on the judge, refusing an offline one.
pub(super) async fn judged<O: Operation + Sync>(
    judge: &Backend,
    row: &Row,
    metric: &str,
    operation: &O,
) -> Result<O::Output, EvalError> {
    scored_by(judge, "judge", row, metric, operation).await
}

/// Runs a scoring operation on `backend` (the `role` named in errors), refusing an offline
/// one.
pub(super) async fn scored_by<O: Operation + Sync>(
    judge: &Backend,
    role: &'static str,
    row: &Row,
    metric: &str,
    operation: &O,
) -> Result<O::Output, EvalError> {
    if judge.is_offline() {
        return Err(EvalError::NeedsJudge {
            dataset: row.dataset.clone(),
            metric: metric.to_string(),
            role,
        });
    }
    judge
        .run(operation, row.lang)
        .await
        .map_err(|source| EvalError::Judge {
            dataset: row.dataset.clone(),
            source,
        })
}

/// LoCoMo: `f1` by category (token F1, multi-hop parts, adversarial abstention), plus the
/// golden answer and evidence.
pub struct LocomoScorer;

#[async_trait]
impl Evaluator for LocomoScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        _graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let category =
            row.info
                .get("category")
                .and_then(Value::as_u64)
                .filter(|c| (1..=5).contains(c))
                .ok_or_else(|| bad(row, "info.category is not 1-5".into()))? as u8;
        let golden = info_text(row, "golden_answer")?;
        let options = if category == 5 {
            let parsed: Value = match row.info.get("golden_answer") {
                Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
                    bad(
                        row,
                        format!("category-5 golden_answer is not an option dict: {e}"),
                    )
                })?,
                Some(other) => other.clone(),
                None => Value::Null,
            };
            let option = |k: &str| {
                parsed[k]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(row, format!("category-5 golden_answer has no option {k}")))
            };
            Some(Options {
                a: option("a")?,
                b: option("b")?,
            })
        } else {
            None
        };
        let f1 = locomo_f1(response, &golden, category, options.as_ref());
        Ok(metrics(json!({
            "f1": f1,
            "golden_answer": row.info.get("golden_answer").cloned().unwrap_or(Value::Null),
            "evidence": row.info.get("evidence").cloned().unwrap_or(Value::Null),
        })))
    }
}

/// DialSim: `accuracy`, true on an exact match, else by the judge.
pub struct DialSimScorer;

#[async_trait]
impl Evaluator for DialSimScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let golden = info_text(row, "golden_answer")?;
        let accuracy = dialsim_exact_match(response, &golden) || {
            let operation = MatchJudge {
                question: row.input.query_text().to_string(),
                golden: golden.clone(),
                prediction: response.to_string(),
            };
            judged(graders.judge, row, "accuracy", &operation).await?
        };
        Ok(metrics(
            json!({"accuracy": accuracy, "golden_answer": golden}),
        ))
    }

    fn concurrency(&self) -> usize {
        4
    }
}

/// LexEval: ROUGE-L F over jieba tokens with upstream's distinct-token semantics.
pub struct LexEvalScorer {
    jieba: Jieba,
}

impl LexEvalScorer {
    /// Loads jieba's dictionary once for every prediction.
    pub fn new() -> LexEvalScorer {
        LexEvalScorer {
            jieba: Jieba::new(),
        }
    }
}

impl Default for LexEvalScorer {
    fn default() -> Self {
        LexEvalScorer::new()
    }
}

#[async_trait]
impl Evaluator for LexEvalScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        _graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let golden = info_text(row, "golden_answer")?;
        let rougel = lexeval_rouge_l(&self.jieba, response, &golden);
        Ok(metrics(json!({"rougel": rougel, "golden_answer": golden})))
    }
}

/// WritingPrompts (and the built-in story sample): METEOR against the reference story.
pub struct MeteorScorer;

#[async_trait]
impl Evaluator for MeteorScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        _graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let golden = info_text(row, "golden_answer")?;
        Ok(metrics(json!({"meteor": meteor_text(&golden, response)})))
    }
}

/// NFCats: the judge's 1–5 `score` (null, counted 0, when it never gave one; 1 when the
/// judge model failed to answer, as upstream scores a request that raised).
pub struct NfcatsScorer;

#[async_trait]
impl Evaluator for NfcatsScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let operation = RubricJudge {
            question: row.input.query_text().to_string(),
            answer: response.to_string(),
        };
        let score = match judged(graders.judge, row, "score", &operation).await {
            Ok(score) => json!(score),
            // Upstream catches the request's exception and scores 1; a broken setup (no
            // server, bad settings) still ends the evaluation here.
            Err(EvalError::Judge { source, .. }) if source.is_answer_failure() => json!(1),
            Err(error) => return Err(error),
        };
        Ok(metrics(json!({ "score": score })))
    }

    fn concurrency(&self) -> usize {
        4
    }
}

/// HelloBench: `avg_score`, the mean of the judge's checklist scores (0 when it gave none).
pub struct HelloBenchScorer;

/// Upstream re-tokenises HelloBench responses and truncates very long ones for the judge.
fn hellobench_response(response: &str) -> String {
    let mut tokens = word_tokenize(response);
    if tokens.len() > 15_000 {
        tokens.truncate(16_000);
    }
    tokens.join(" ")
}

#[async_trait]
impl Evaluator for HelloBenchScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let checklist = row
            .info
            .get("checklist")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| bad(row, "info.checklist is not a list".into()))?;
        let operation = ChecklistJudge {
            instruction: row.input.query_text().to_string(),
            response: hellobench_response(response),
            checklist: checklist.clone(),
        };
        let items: Vec<Value> = judged(graders.judge, row, "avg_score", &operation)
            .await?
            .into_iter()
            .map(checklist_item)
            .collect();
        let scores: Vec<f64> = items
            .iter()
            .map(|item| item["evaluation_score"].as_f64().unwrap_or(0.0))
            .collect();
        let avg = if scores.is_empty() {
            0.0
        } else {
            scores.iter().sum::<f64>() / scores.len() as f64
        };
        Ok(metrics(json!({
            "avg_score": avg,
            "checklist_evaluation": items,
            "checklist": checklist,
        })))
    }

    fn concurrency(&self) -> usize {
        4
    }
}

/// One checklist verdict with numeric id and score, or upstream's error entry.
fn checklist_item(item: Value) -> Value {
    let number = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    match (
        number(&item["checklist_id"]),
        number(&item["evaluation_score"]),
    ) {
        (Some(id), Some(score)) => json!({
            "checklist_id": id.trunc() as i64,
            "reason": item["reason"],
            "evaluation_score": score,
        }),
        _ => json!({
            "checklist_id": -1,
            "reason": "Error in parsing checklist_id or evaluation_score.",
            "evaluation_score": 0.0,
        }),
    }
}

/// WritingBench: the critic's 1–10 `score`, its reason and the criteria (null score when the
/// critic never answered usably; upstream raises instead), from the critic role.
pub struct WritingBenchScorer;

#[async_trait]
impl Evaluator for WritingBenchScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let operation = CriticJudge {
            query: row.input.query_text().to_string(),
            response: response.to_string(),
            criteria: row.info.get("criteria").cloned().unwrap_or(Value::Null),
        };
        let criteria = operation.criteria.clone();
        Ok(
            match scored_by(graders.critic, "critic", row, "score", &operation).await? {
                Some((score, reason)) => {
                    metrics(json!({"score": score, "reason": reason, "criteria": criteria}))
                }
                None => metrics(
                    json!({"score": null, "reason": "no usable critic reply", "criteria": criteria}),
                ),
            },
        )
    }

    fn concurrency(&self) -> usize {
        4
    }
}

/// JuDGE, JRE-L: the merged 1–10 judge score their domain and task summaries use,
/// under the dataset's rubric, beside the component metrics computed here (JRE-L's ROUGE-L and
/// readability; JuDGE's legal metrics with upstream's charge lexicon, so with `--upstream`;
/// BERTScore needs a model not shipped, and the judge is told which are missing and why).
pub struct MergedJudgeScorer(pub MergedRubric);

#[async_trait]
impl Evaluator for MergedJudgeScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let reference = ["golden_answer", "abstract", "pr-abstract"]
            .iter()
            .find_map(|key| row.info.get(*key).and_then(Value::as_str))
            .unwrap_or_default()
            .to_string();
        let (shown, upstream_fields, mut computed) = match self.0 {
            MergedRubric::Judge => {
                let upstream = graders.judge.wording().checkout();
                let inputs = judge_inputs(upstream, response, &reference);
                (inputs.shown, inputs.upstream_fields, inputs.recorded)
            }
            rubric => {
                let shown = rubric.metrics(response, &reference);
                let mut computed = Map::new();
                for metric in &shown {
                    if let Ok(value) = metric.value {
                        computed.insert(metric.name.to_string(), json!(value));
                    }
                }
                let fields = rubric.upstream_fields(response, &reference);
                (shown, fields, computed)
            }
        };
        let operation = OverallJudge {
            rubric: self.0,
            input: row.input.query_text().to_string(),
            output: response.to_string(),
            metrics: shown,
            upstream_fields,
            reference,
        };
        let score = judged(graders.judge, row, MERGED_SCORE, &operation).await?;
        computed.insert(MERGED_SCORE.to_string(), json!(score));
        Ok(computed)
    }

    fn concurrency(&self) -> usize {
        4
    }
}
