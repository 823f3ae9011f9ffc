//! Scoring predictions with each dataset's upstream metrics (`memorybench.evaluate`).
//!
//! An [`Evaluator`] scores one prediction of one row; [`evaluator_for`] picks a dataset's
//! evaluator from its upstream class, and [`evaluate`] scores a dataset's predictions with
//! bounded concurrency (upstream's `evaluate_threads`), sorted by `test_idx`. Metrics that
//! need a judge model run through the LLM layer's judge role; with an offline judge they fail
//! with [`EvalError::NeedsJudge`] instead of inventing a score.

mod ideabench;
mod judges;
mod legal;
mod limitgen;
mod merged;
mod scorers;
mod shown;

use async_trait::async_trait;
use futures::stream::{self, StreamExt, TryStreamExt};
use mb_llm::ops::Backend;
use mb_llm::LlmStack;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use mb_datasets::{Dataset, DatasetConfig, Row};

pub use ideabench::{IdeaBenchScorer, IdeaRanking, IdeaRating, IDEA_SEPARATOR};
pub use judges::{ChecklistJudge, CriticJudge, MatchJudge, RubricJudge};
pub use limitgen::{limitations, LimitGenScorer};
pub use merged::{MergedRubric, OverallJudge};
pub use scorers::{
    DialSimScorer, HelloBenchScorer, LexEvalScorer, LocomoScorer, MergedJudgeScorer, MeteorScorer,
    NfcatsScorer, WritingBenchScorer,
};
pub use shown::ShownMetric;

/// One prediction, as upstream's `predict.json` stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// The row answered.
    pub test_idx: u64,
    /// The conversation sent to the model (prompt with retrieved memory, etc.).
    #[serde(default)]
    pub messages: Vec<Value>,
    /// The model's answer.
    pub response: String,
    /// The dataset of the row.
    pub dataset: String,
}

/// One prediction's metrics, as upstream's `evaluate_details.json` stores them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluateDetail {
    /// The row scored.
    pub test_idx: u64,
    /// Every value the dataset's evaluation returns (not only its test metrics).
    pub metrics: Map<String, Value>,
    /// The dataset of the row.
    pub dataset: String,
}

/// Why predictions cannot be scored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The metric needs a model and the role that provides it is offline.
    #[error("dataset {dataset}: metric {metric:?} needs a model; configure the {role} role (e.g. --llm configs/llm/paper.toml)")]
    NeedsJudge {
        /// The dataset.
        dataset: String,
        /// The metric.
        metric: String,
        /// The role that scores it (`judge`, or `critic` for WritingBench).
        role: &'static str,
    },
    /// No evaluator exists for the dataset's metrics.
    #[error("dataset {dataset}: {reason}")]
    Unsupported {
        /// The dataset.
        dataset: String,
        /// What is missing.
        reason: String,
    },
    /// A prediction names a row the dataset does not have, or a row lacks what its metric reads.
    #[error("dataset {dataset}, test_idx {test_idx}: {reason}")]
    BadItem {
        /// The dataset.
        dataset: String,
        /// The row.
        test_idx: u64,
        /// What is wrong.
        reason: String,
    },
    /// The judge model failed (unreachable, rejected request).
    #[error("dataset {dataset}: judge: {source}")]
    Judge {
        /// The dataset.
        dataset: String,
        /// The provider's error.
        source: mb_llm::LlmError,
    },
}

/// The models that score predictions: the judge of judged metrics, and WritingBench's critic
/// (upstream scores WritingBench with its own fine-tuned model).
#[derive(Clone, Copy)]
pub struct Graders<'a> {
    /// The LLM judge.
    pub judge: &'a Backend,
    /// WritingBench's critic.
    pub critic: &'a Backend,
}

impl<'a> Graders<'a> {
    /// The judge and the critic of a run's models.
    pub fn of(llm: &'a LlmStack) -> Graders<'a> {
        Graders {
            judge: &llm.judge,
            critic: &llm.critic,
        }
    }

    /// One backend in both roles (tests, and callers with a single scoring model).
    pub fn both(backend: &'a Backend) -> Graders<'a> {
        Graders {
            judge: backend,
            critic: backend,
        }
    }
}

/// A dataset's scoring of one prediction.
#[async_trait]
pub trait Evaluator: Send + Sync {
    /// The metrics of `response` to `row`, with `graders` for metrics that need a model.
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError>;

    /// How many predictions upstream scores at once (its `evaluate_threads`).
    fn concurrency(&self) -> usize {
        1
    }
}

/// The evaluator of a dataset, from its upstream class (`class_name`).
pub fn evaluator_for(config: &DatasetConfig) -> Result<Box<dyn Evaluator>, EvalError> {
    let class = config.class_name.split('.').next().unwrap_or_default();
    Ok(match class {
        "Locomo" => Box::new(LocomoScorer),
        "DialSim" => Box::new(DialSimScorer),
        "LexEval" => Box::new(LexEvalScorer::new()),
        "WritingPrompts" => Box::new(MeteorScorer),
        "NFCats" => Box::new(NfcatsScorer),
        "HelloBench" => Box::new(HelloBenchScorer),
        "WritingBench" => Box::new(WritingBenchScorer),
        "JuDGE" => Box::new(MergedJudgeScorer(MergedRubric::Judge)),
        "IdeaBench" => Box::new(IdeaBenchScorer),
        "JRE-L" | "JRE_L" => Box::new(MergedJudgeScorer(MergedRubric::JreL)),
        "LimitGen" => Box::new(LimitGenScorer),
        _ => {
            return Err(EvalError::Unsupported {
                dataset: config.dataset_name.clone(),
                reason: format!("no evaluator for class {:?}", config.class_name),
            })
        }
    })
}

/// Scores a dataset's predictions (rows from either split), sorted by `test_idx`.
pub async fn evaluate(
    dataset: &Dataset,
    predictions: &[Prediction],
    evaluator: &dyn Evaluator,
    graders: Graders<'_>,
) -> Result<Vec<EvaluateDetail>, EvalError> {
    let name = dataset.name();
    let jobs = predictions.iter().map(|prediction| async move {
        let (_, row) = dataset
            .row(prediction.test_idx)
            .ok_or_else(|| EvalError::BadItem {
                dataset: name.to_string(),
                test_idx: prediction.test_idx,
                reason: "no such row".into(),
            })?;
        let metrics = evaluator
            .evaluate(row, &prediction.response, graders)
            .await?;
        Ok::<_, EvalError>(EvaluateDetail {
            test_idx: prediction.test_idx,
            metrics,
            dataset: name.to_string(),
        })
    });
    let mut details: Vec<EvaluateDetail> = stream::iter(jobs)
        .buffered(evaluator.concurrency().max(1))
        .try_collect()
        .await?;
    details.sort_by_key(|d| d.test_idx);
    Ok(details)
}

/// The single value a domain or task summary takes from an item's metrics: the merged judge
/// score for datasets with several metrics, LimitGen's `rating`, otherwise the first test
/// metric.
pub fn summary_value<'a>(
    config: &DatasetConfig,
    metrics: &'a Map<String, Value>,
) -> Option<&'a Value> {
    let class = config.class_name.split('.').next().unwrap_or_default();
    match class {
        "JuDGE" | "IdeaBench" | "JRE-L" | "JRE_L" => metrics.get(scorers::MERGED_SCORE),
        "LimitGen" => metrics.get("rating"),
        _ => config.test_metrics.first().and_then(|m| metrics.get(m)),
    }
}
