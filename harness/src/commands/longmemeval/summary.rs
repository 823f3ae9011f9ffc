//! A LongMemEval run's results: the predictions in the official format (so the official
//! `print_qa_metrics.py` reads them), each case's cost, and the summary with accuracy overall,
//! per question type and on abstention questions, beside the run's mean cost per question.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use mb_baselines::SystemSpec;
use mb_datasets::longmemeval::QuestionType;
use mb_eval::longmemeval::qa::accuracy;
use mb_eval::{RunFiles, SUMMARY};
use mb_llm::LlmStack;
use serde_json::{json, Value};

use super::case::LmeCase;
use crate::error::{file_error, HarnessError};
use crate::run::cases::{Outcome, RunTiming, TIMING};
use crate::run::fewer_memories::refuse_all_failed;

/// The predictions, one JSON object per line as the official scripts read them.
pub const PREDICTIONS: &str = "predictions.jsonl";

/// Writes the run's files from its `finished` cases (the first of a question wins) and the
/// instances `broken` skipped; `about` (file, reading, judge, …) heads the summary.
pub fn write(
    files: &RunFiles,
    spec: &'static SystemSpec,
    llm: &Arc<LlmStack>,
    finished: Vec<LmeCase>,
    broken: Vec<Value>,
    about: Value,
) -> Result<Outcome, HarnessError> {
    let mut by_index: BTreeMap<usize, LmeCase> = BTreeMap::new();
    for case in finished {
        by_index.entry(case.index).or_insert(case);
    }
    let cases: Vec<&LmeCase> = by_index.values().collect();
    refuse_all_failed(cases.iter().map(|c| &c.failures))?;
    write_predictions(files, &cases, about["judge"].as_str().unwrap_or_default())?;
    let per_case: Vec<Value> = cases
        .iter()
        .map(|c| {
            json!({
                "question_id": c.question_id,
                "seconds": c.timing,
                "judge": c.judge,
                "turns": c.turns,
                "items": c.items,
                "failed_attempts": c.failures.failed_attempts,
                "error": c.failures.error,
                "judge_error": c.judge_error,
                "fallbacks": c.fallbacks,
            })
        })
        .collect();
    files.write(TIMING, &per_case)?;

    let judged: Vec<(QuestionType, bool)> = cases
        .iter()
        .filter_map(|c| {
            QuestionType::parse(&c.question_type).map(|t| (t, c.correct.unwrap_or(false)))
        })
        .collect();
    let scored = accuracy(&judged);
    let abstention: Vec<bool> = cases
        .iter()
        .filter(|c| c.abstention)
        .map(|c| c.correct.unwrap_or(false))
        .collect();
    let share = |items: &[bool]| {
        (!items.is_empty())
            .then(|| items.iter().filter(|c| **c).count() as f64 / items.len() as f64)
    };
    let memory_seconds: f64 = cases.iter().map(|c| c.timing.memory_corpus).sum();
    let turns: usize = cases.iter().map(|c| c.turns).sum();
    let RunTiming {
        mean: timing,
        answer_errors,
        summary: mut timing_summary,
    } = RunTiming::of(cases.iter().map(|c| (c.timing, &c.failures)), llm);
    timing_summary["ingestion_turns_per_second"] = json!(if memory_seconds > 0.0 {
        turns as f64 / memory_seconds
    } else {
        0.0
    });
    // `+ 0.0`: an empty float sum is -0.0.
    let judge_seconds = cases.iter().map(|c| c.judge.seconds).sum::<f64>() + 0.0;
    timing_summary["judge_seconds"] = json!(judge_seconds);
    let summary = json!({
        "about": about,
        "questions": cases.len(),
        "accuracy": {
            "overall": scored.as_ref().map(|s| s.overall),
            "task_averaged": scored.as_ref().and_then(|s| s.task_averaged),
            "per_type": scored.as_ref().map(|s| s.per_type.iter()
                .map(|(t, a)| (t.to_string(), json!(a)))
                .collect::<serde_json::Map<String, Value>>()),
            "abstention": share(&abstention),
            "abstention_questions": abstention.len(),
        },
        "judge_errors": cases.iter().filter(|c| c.judge_error.is_some()).count(),
        "broken": broken,
        "prompts": timing_summary["prompts"].clone(),
        "timing": timing_summary,
    });
    files.write(SUMMARY, &summary)?;
    print_accuracy(spec, &summary).map_err(HarnessError::Output)?;
    Ok(Outcome {
        system: spec.name,
        dir: files.dir().to_path_buf(),
        cases: cases.len(),
        timing,
        score: scored.map(|s| s.overall),
        answer_errors,
        prompts: crate::run::cases::prompts_of(&summary),
    })
}

/// `predictions.jsonl`: `question_id`, `hypothesis` and the verdict as `autoeval_label`.
fn write_predictions(
    files: &RunFiles,
    cases: &[&LmeCase],
    judge: &str,
) -> Result<(), HarnessError> {
    let mut text = String::new();
    for case in cases {
        let line = json!({
            "question_id": case.question_id,
            "hypothesis": case.hypothesis,
            "autoeval_label": {"model": judge, "label": case.correct.unwrap_or(false)},
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let path = files.path(PREDICTIONS);
    mb_core::atomic_file::write_atomic(&path, text.as_bytes()).map_err(|e| file_error(&path, e))
}

/// The accuracy table printed before the run's cost table.
fn print_accuracy(spec: &SystemSpec, summary: &Value) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let accuracy = &summary["accuracy"];
    writeln!(
        out,
        "{} on LongMemEval ({} reading, judge: {})",
        spec.name,
        summary["about"]["reading"].as_str().unwrap_or_default(),
        summary["about"]["judge"].as_str().unwrap_or_default(),
    )?;
    if let Some(types) = accuracy["per_type"].as_object() {
        for (name, value) in types {
            writeln!(out, "  {name:<27}{:>7.3}", value.as_f64().unwrap_or(0.0))?;
        }
    }
    let number = |v: &Value| v.as_f64().map_or("-".to_string(), |v| format!("{v:.3}"));
    writeln!(
        out,
        "  {:<27}{:>7} ({} questions; task-averaged {}; abstention {} of {})",
        "overall",
        number(&accuracy["overall"]),
        summary["questions"],
        number(&accuracy["task_averaged"]),
        number(&accuracy["abstention"]),
        accuracy["abstention_questions"],
    )
}
