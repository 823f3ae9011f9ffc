//! `mb-eval`: scoring a run's predictions as MemoryBench scores them, and the files that hold
//! them.
//!
//! Evaluation lives apart from `mb-datasets` because it needs the model client: the judges of
//! upstream's judge-based metrics are operations of `mb-llm`, which brings an HTTP stack and an
//! async runtime. Loading, splitting and importing data needs neither, so `mb-datasets` builds
//! without them and this crate builds on it.
//!
//! An [`Evaluator`] scores one prediction of one row; [`evaluator_for`] picks a dataset's
//! evaluator from its upstream class and [`evaluate()`] scores a dataset's [`Prediction`]s into
//! [`EvaluateDetail`]s. The metrics themselves, computed exactly as upstream computes them
//! (LoCoMo's F1, METEOR, ROUGE-L, readability, retrieval recall), are in [`metrics`];
//! [`summarize_run`] computes upstream's normalized summaries, and [`RunFiles`] names the result
//! files (`predict.json`, `evaluate_details.json`, `summary.json`) with upstream's names and
//! fields. [`longmemeval`] holds LongMemEval's reading prompt, judge and accuracy.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod evaluate;
pub mod longmemeval;
pub mod metrics;
mod numpy_scores;
mod results;
mod summary;

pub use evaluate::{
    evaluate, evaluator_for, limitations, summary_value, ChecklistJudge, CriticJudge,
    DialSimScorer, EvalError, EvaluateDetail, Evaluator, Graders, HelloBenchScorer,
    IdeaBenchScorer, IdeaRanking, IdeaRating, LexEvalScorer, LimitGenScorer, LocomoScorer,
    MatchJudge, MergedJudgeScorer, MergedRubric, MeteorScorer, NfcatsScorer, OverallJudge,
    Prediction, RubricJudge, ShownMetric, WritingBenchScorer, IDEA_SEPARATOR,
};
pub use numpy_scores::{numpy_metric, NumpyScores};
pub use results::{
    read_json, write_json, ResultsError, RunFiles, EVALUATE_DETAILS, PREDICT, RUN_CONFIG, SUMMARY,
};
pub use summary::{
    builtin_statistics, group_name, item_value, single_summary, summarize_run, GroupStats,
    Normalization, SummaryError,
};
