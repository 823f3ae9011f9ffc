//! The user-feedback simulator: how a simulated user reacts to an answer.
//!
//! As upstream routes it: LoCoMo and DialSim get rule-based feedback from their own metric (a
//! LoCoMo answer is right when its F1 exceeds 0.5, a DialSim one when it is accurate); the
//! other datasets get the LLM simulator (the `simulator` role's `SimulateFeedback` operation),
//! told who the user is and given the row's ground truth as evaluation context.

use mb_datasets::row::{Action, Row};
use mb_datasets::Dataset;
use mb_eval::{EvalError, Evaluator, Graders};
use mb_llm::ops::{ImplicitAction, SimulateFeedback, UserPersona};
use mb_llm::{LlmStack, Message, Role};
use mb_upstream::RuleFeedbackOf;
use serde_json::Value;

use crate::error::HarnessError;

/// The simulated user's reaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Reaction {
    /// Whether the user ends the conversation.
    pub end: bool,
    /// What the user says next (may be empty).
    pub text: String,
    /// The implicit action.
    pub action: Action,
}

/// The reaction to the last assistant message of `conversation` about `row`.
pub async fn react(
    dataset: &Dataset,
    row: &Row,
    conversation: &[Message],
    evaluator: &dyn Evaluator,
    llm: &LlmStack,
) -> Result<Reaction, HarnessError> {
    let answer = conversation
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map_or("", |m| m.content.as_str());
    let name = dataset.name().to_lowercase();
    if name.contains("locomo") || name.contains("dialsim") {
        let of = if name.contains("locomo") {
            RuleFeedbackOf::Locomo
        } else {
            RuleFeedbackOf::DialSim
        };
        let correct = rule_verdict(row, answer, evaluator, Graders::of(llm)).await?;
        return Ok(Reaction {
            end: correct,
            text: rule_text(llm, of, correct)?,
            action: if correct {
                Action::Like
            } else {
                Action::Dislike
            },
        });
    }
    let (persona, task) = persona(&dataset.config.class_name);
    let mut operation = SimulateFeedback::new(persona, task, conversation.to_vec())
        .with_row(row.dataset.clone(), row.info.clone());
    if let Some(reference) = reference(row) {
        operation = operation.with_reference(reference.clone(), format!("Reference: {reference}"));
    }
    let feedback = llm.simulator.run(&operation, row.lang).await?;
    Ok(Reaction {
        end: feedback.should_end(),
        text: feedback.response.clone().unwrap_or_default(),
        action: match feedback.implicit_action {
            ImplicitAction::Like => Action::Like,
            ImplicitAction::Dislike => Action::Dislike,
            ImplicitAction::Copy => Action::Copy,
            ImplicitAction::None => Action::None,
        },
    })
}

/// What the simulated user says to a `correct` (or wrong) answer on a rule-judged dataset: in
/// upstream's words with `--upstream`, else in the project's.
fn rule_text(llm: &LlmStack, of: RuleFeedbackOf, correct: bool) -> Result<String, HarnessError> {
    if let Some(upstream) = llm.wording.checkout() {
        return Ok(upstream.rule_feedback(of, correct)?);
    }
    Ok(if correct {
        "That's right, thank you for the precise answer!"
    } else {
        "That's not right. Please try again and be more accurate."
    }
    .to_string())
}

/// LoCoMo: F1 above 0.5; DialSim: accuracy (exact match when no judge model is configured).
async fn rule_verdict(
    row: &Row,
    answer: &str,
    evaluator: &dyn Evaluator,
    graders: Graders<'_>,
) -> Result<bool, HarnessError> {
    let metrics = match evaluator.evaluate(row, answer, graders).await {
        Ok(metrics) => metrics,
        // Offline, DialSim's judge is unavailable: an answer that is not an exact match counts
        // as wrong.
        Err(EvalError::NeedsJudge { .. }) => return Ok(false),
        Err(other) => return Err(other.into()),
    };
    Ok(match (metrics.get("f1"), metrics.get("accuracy")) {
        (Some(f1), _) => f1.as_f64().unwrap_or(0.0) > 0.5,
        (_, Some(accuracy)) => accuracy.as_bool().unwrap_or(false),
        _ => false,
    })
}

/// What the simulator is told about the task's ground truth.
fn reference(row: &Row) -> Option<String> {
    [
        "golden_answer",
        "checklist",
        "criteria",
        "ground_truth",
        "abstract",
        "pr-abstract",
    ]
    .iter()
    .find_map(|key| match row.info.get(*key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}

/// Who the simulated user is for a dataset class, and what they asked for.
fn persona(class_name: &str) -> (UserPersona, String) {
    let (persona, expertise, criteria, task): (&str, &str, &[&str], &str) =
        match class_name.split('.').next().unwrap_or_default() {
            "LexEval" => (
                "someone looking for reliable legal information",
                "Chinese law",
                &[
                    "accurate legal content",
                    "cites the relevant law",
                    "answers what was asked",
                ],
                "a legal question",
            ),
            "JuDGE" => (
                "a Chinese legal professional",
                "criminal judgments",
                &[
                    "correct charges and sentence",
                    "complete judgment structure",
                ],
                "drafting a criminal judgment",
            ),
            "WritingBench" => (
                "someone who needs a piece of writing in their field",
                "the field of the request",
                &[
                    "follows every requirement",
                    "well organized",
                    "fit for purpose",
                ],
                "a writing request",
            ),
            "HelloBench" => (
                "a reader who wants high-quality content",
                "the topic of the request",
                &["complete", "accurate", "well written"],
                "an open-ended request",
            ),
            "IdeaBench" => (
                "a biomedical researcher",
                "biomedical research",
                &["novel", "feasible", "grounded in the references"],
                "research hypotheses",
            ),
            "JRE-L" | "JRE_L" => (
                "a science journalist",
                "science communication",
                &["accurate", "accessible to lay readers", "engaging"],
                "a press summary of a paper",
            ),
            "LimitGen" => (
                "an expert reviewer",
                "peer review",
                &[
                    "specific limitations",
                    "about the requested aspect",
                    "not stated in the paper",
                ],
                "limitations of a paper",
            ),
            "NFCats" => (
                "someone asking a non-factoid question",
                "everyday knowledge",
                &["answers the question", "concise", "informative"],
                "a non-factoid question",
            ),
            _ => (
                "a creative-writing enthusiast",
                "fiction",
                &["follows the prompt", "engaging", "well told"],
                "a story",
            ),
        };
    (
        UserPersona {
            persona: persona.to_string(),
            expertise: expertise.to_string(),
            criteria: criteria.iter().map(|c| c.to_string()).collect(),
        },
        task.to_string(),
    )
}
