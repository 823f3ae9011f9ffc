//! LongMemEval's question answering: the reading prompt (plain, or Chain-of-Note with the
//! memories as JSON) and the judge, with one prompt per question type and yes/no decided as
//! the official `evaluate_qa.py` decides it. Our wording throughout.

use std::collections::BTreeMap;

use mb_core::Lang;
use mb_llm::ops::Operation;
use mb_llm::{Message, Sampling};
use serde_json::json;

use super::data::QuestionType;
use crate::metrics::locomo::token_recall;

/// How retrieved history is shown to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadingStyle {
    /// The history items as dated text, then the question.
    Plain,
    /// The history as a JSON array of `{date, content}` sorted by date; the model first notes
    /// what each item says about the question, then reasons to the answer (Chain-of-Note).
    ChainOfNote,
}

/// The reading prompt: `items` (`(date, text)`, any order; shown sorted by date), the date the
/// question is asked on, and the question.
pub fn reading_prompt(
    style: ReadingStyle,
    items: &[(String, String)],
    question_date: &str,
    question: &str,
) -> Vec<Message> {
    let mut sorted: Vec<&(String, String)> = items.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let history = match style {
        ReadingStyle::Plain => sorted
            .iter()
            .enumerate()
            .map(|(i, (date, text))| format!("History item {} (dated {date}):\n{text}\n", i + 1))
            .collect::<Vec<_>>()
            .join("\n"),
        ReadingStyle::ChainOfNote => {
            let array: Vec<_> = sorted
                .iter()
                .map(|(date, text)| json!({"date": date, "content": text}))
                .collect();
            serde_json::to_string_pretty(&array).unwrap_or_default()
        }
    };
    let instruction = match style {
        ReadingStyle::Plain => {
            "Answer the question using the chat history between you and the user above. \
             If the history does not contain the answer, say that you do not know."
        }
        ReadingStyle::ChainOfNote => {
            "First, for each history item, write a short note of what it tells about the \
             question (or that it tells nothing). Then reason step by step from those notes to \
             the answer. If the notes do not contain the answer, say that you do not know."
        }
    };
    vec![
        Message::system("You are a helpful assistant with a memory of earlier conversations with this user."),
        Message::user(format!(
            "Chat history:\n{history}\n\nToday is {question_date}.\n{instruction}\n\nQuestion: {question}\nAnswer:"
        )),
    ]
}

/// The judge of one answer: does the response answer the question correctly? `yes` anywhere
/// in the lowercased reply means correct, as the official script reads it.
///
/// Offline (no judge model) it is a lexical proxy, not the paper's judge: an abstention answer
/// is correct when it says it does not know; any other when it contains at least half of the
/// reference's words (normalized and stemmed as LoCoMo's F1 counts them). Rubrics
/// (preference questions) rarely pass it.
#[derive(Debug, Clone)]
pub struct LongMemEvalJudge {
    /// The question's type (selects the criteria).
    pub question_type: QuestionType,
    /// Whether it is an abstention question (the reference explains why it cannot be answered).
    pub abstention: bool,
    /// The question.
    pub question: String,
    /// The reference answer (a rubric for preference questions).
    pub answer: String,
    /// The system's response.
    pub hypothesis: String,
}

impl LongMemEvalJudge {
    fn criteria(&self) -> &'static str {
        if self.abstention {
            return "The question cannot be answered from what the user shared; the reference \
                    explains why. Say yes if the response recognizes that it cannot answer \
                    (it does not know, or the information was never given); say no if it gives \
                    an answer as if it knew.";
        }
        match self.question_type {
            QuestionType::SingleSessionUser
            | QuestionType::SingleSessionAssistant
            | QuestionType::MultiSession => {
                "Say yes if the response contains the reference answer or something equivalent \
                 to it, or all the intermediate steps that lead to it. Say no if it gives only \
                 part of the required information, or a different answer."
            }
            QuestionType::TemporalReasoning => {
                "Say yes if the response contains the reference answer or something equivalent \
                 to it, or all the intermediate steps that lead to it; a count of days, weeks \
                 or months that is off by one from the reference still counts as correct. Say \
                 no if it gives only part of the required information, or a different answer."
            }
            QuestionType::KnowledgeUpdate => {
                "The user's information changed over time and the reference is the latest \
                 value. Say yes if the response gives the updated answer, even when it also \
                 mentions the earlier value; say no if it gives only an outdated value or a \
                 different answer."
            }
            QuestionType::SingleSessionPreference => {
                "The reference is a rubric describing a personalized response. Say yes if the \
                 response uses the user's personal information correctly in the spirit of the \
                 rubric (it need not cover every point); say no if it ignores or contradicts \
                 what the user shared."
            }
        }
    }
}

impl Operation for LongMemEvalJudge {
    type Output = bool;

    fn name(&self) -> &'static str {
        "judge_longmemeval"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        let reference = if self.abstention {
            "Explanation"
        } else if self.question_type == QuestionType::SingleSessionPreference {
            "Rubric"
        } else {
            "Reference answer"
        };
        vec![Message::user(format!(
            "You grade a chat assistant's response to a question about its past conversations \
             with the user. {criteria}\n\nQuestion: {question}\n{reference}: {answer}\n\
             Response: {hypothesis}\n\nIs the response correct? Answer yes or no only.",
            criteria = self.criteria(),
            question = self.question,
            answer = self.answer,
            hypothesis = self.hypothesis,
        ))]
    }

    fn sampling(&self) -> Sampling {
        Sampling::new(0.0, 1.0, 10)
    }

    fn parse(&self, text: &str) -> Option<bool> {
        Some(text.to_lowercase().contains("yes"))
    }

    fn fallback(&self) -> bool {
        false
    }

    fn offline(&self, _lang: Lang) -> bool {
        if self.abstention {
            return says_unknown(&self.hypothesis);
        }
        token_recall(&self.hypothesis, &self.answer) >= OFFLINE_RECALL
    }
}

/// The share of the reference's words an answer must contain for the offline judge.
const OFFLINE_RECALL: f64 = 0.5;

/// Whether a response declines to answer for lack of information.
fn says_unknown(response: &str) -> bool {
    let text = response.to_lowercase().replace('\u{2019}', "'");
    [
        "don't know",
        "do not know",
        "not sure",
        "no information",
        "not mentioned",
        "never mentioned",
        "cannot answer",
        "can't answer",
        "unable to",
        "not enough information",
    ]
    .iter()
    .any(|phrase| text.contains(phrase))
}

/// QA accuracy: overall, per question type, and averaged over types (each type weighs the
/// same), from `(type, correct)` pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Accuracy {
    /// Share correct over all questions.
    pub overall: f64,
    /// Share correct per type.
    pub per_type: BTreeMap<QuestionType, f64>,
    /// Mean of the per-type shares.
    pub task_averaged: f64,
}

/// Accuracy of `judged` (`(type, correct)` per question); `None` when empty.
pub fn accuracy(judged: &[(QuestionType, bool)]) -> Option<Accuracy> {
    if judged.is_empty() {
        return None;
    }
    let share = |items: &[bool]| items.iter().filter(|c| **c).count() as f64 / items.len() as f64;
    let mut by_type: BTreeMap<QuestionType, Vec<bool>> = BTreeMap::new();
    for (t, correct) in judged {
        by_type.entry(*t).or_default().push(*correct);
    }
    let per_type: BTreeMap<QuestionType, f64> = by_type
        .iter()
        .map(|(t, items)| (*t, share(items)))
        .collect();
    let all: Vec<bool> = judged.iter().map(|(_, c)| *c).collect();
    Some(Accuracy {
        overall: share(&all),
        task_averaged: per_type.values().sum::<f64>() / per_type.len() as f64,
        per_type,
    })
}
