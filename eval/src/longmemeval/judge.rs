//! LongMemEval's judge: one yes/no prompt per question type with the official
//! `evaluate_qa.py`'s criteria (in our words, nothing added), `yes` anywhere in the lower-cased
//! reply meaning correct; or the official prompt itself, read from a LongMemEval checkout
//! ([`LongMemEvalJudge::in_official_words`], `--longmemeval-upstream`); or the templates a user
//! supplies ([`JudgePrompts`], `--judge-prompts`, the older way to the official words).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use mb_core::Lang;
use mb_llm::ops::Operation;
use mb_llm::{Message, Sampling};
use mb_upstream::{LongMemEval, Upstream, UpstreamError};

use crate::metrics::locomo::token_recall;
use mb_datasets::longmemeval::QuestionType;

/// The judge of one answer: does the response answer the question correctly?
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
    /// Which words the prompt is in.
    pub words: JudgeWords,
}

/// The words of the judge's prompt.
#[derive(Debug, Clone, Default)]
pub enum JudgeWords {
    /// Ours: the official criteria in our words.
    #[default]
    Ours,
    /// Templates the user supplied (`--judge-prompts`).
    Supplied(Arc<JudgePrompts>),
    /// The official prompt, built from a LongMemEval checkout
    /// ([`LongMemEvalJudge::in_official_words`]).
    Official(Official),
}

/// A prompt built in LongMemEval's official words from a checkout, and only there: a request
/// holding one goes out exactly as the official code writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Official(String);

impl Official {
    /// A prompt the official code would write, built from the checkout.
    pub(crate) fn new(prompt: String) -> Official {
        Official(prompt)
    }

    /// The one user message the official code sends with it.
    pub(crate) fn messages(&self) -> Vec<Message> {
        vec![Message::user(self.0.clone())]
    }
}

impl LongMemEvalJudge {
    /// This judge with the official prompt, `get_anscheck_prompt`'s, read from the checkout
    /// `lme`.
    pub fn in_official_words(self, lme: &LongMemEval) -> Result<Self, UpstreamError> {
        let prompt = lme.judge_prompt(
            self.question_type.as_str(),
            self.abstention,
            &self.question,
            &self.answer,
            &self.hypothesis,
        )?;
        Ok(LongMemEvalJudge {
            words: JudgeWords::Official(Official::new(prompt)),
            ..self
        })
    }

    /// The template key of this question: its type's name, or `abstention`.
    fn key(&self) -> &'static str {
        if self.abstention {
            ABSTENTION
        } else {
            self.question_type.as_str()
        }
    }

    /// Our prompt: the official criteria for the question's type, in our words.
    fn our_prompt(&self) -> String {
        let same_answer = "Say yes if the response contains the correct answer, or an answer \
                           equivalent to it, or every intermediate step that leads to it; \
                           otherwise say no. A response holding only part of the information \
                           the answer needs is a no.";
        let (intro, criteria, reference, ask) = if self.abstention {
            (
                "a question that cannot be answered, an explanation of why",
                "Say yes if the response recognizes that the question cannot be answered: it \
                 may say the information is incomplete, or that related information was given \
                 but not the information asked for."
                    .to_string(),
                "Explanation",
                "Does the response recognize that the question cannot be answered?",
            )
        } else {
            let criteria = match self.question_type {
                QuestionType::SingleSessionUser
                | QuestionType::SingleSessionAssistant
                | QuestionType::MultiSession => same_answer.to_string(),
                QuestionType::TemporalReasoning => format!(
                    "{same_answer} Do not count off-by-one errors against it: when the \
                     question asks for a number of days, weeks, months and so on, a response \
                     one away from the correct number (19 days for 18) is still correct."
                ),
                QuestionType::KnowledgeUpdate => {
                    "Say yes if the response contains the correct answer; otherwise say no. A \
                     response that mentions earlier information together with an updated \
                     answer is correct as long as the updated answer is the one required."
                        .to_string()
                }
                QuestionType::SingleSessionPreference => {
                    "Say yes if the response meets the desired response; otherwise say no. It \
                     need not reflect every point of the rubric: it is correct as long as it \
                     recalls and uses the user's personal information correctly."
                        .to_string()
                }
            };
            let (intro, reference) = match self.question_type {
                QuestionType::SingleSessionPreference => (
                    "a question, a rubric for the desired personalized response",
                    "Rubric",
                ),
                _ => ("a question, its correct answer", "Correct Answer"),
            };
            (intro, criteria, reference, "Is the response correct?")
        };
        format!(
            "You are given {intro}, and a model's response. {criteria}\n\nQuestion: {}\n\n\
             {reference}: {}\n\nModel Response: {}\n\n{ask} Answer yes or no only.",
            self.question, self.answer, self.hypothesis
        )
    }
}

impl Operation for LongMemEvalJudge {
    type Output = bool;

    fn name(&self) -> &'static str {
        "judge_longmemeval"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        let prompt = match &self.words {
            JudgeWords::Official(official) => return official.messages(),
            JudgeWords::Supplied(prompts) => {
                prompts.fill(self.key(), &self.question, &self.answer, &self.hypothesis)
            }
            JudgeWords::Ours => self.our_prompt(),
        };
        vec![Message::user(prompt)]
    }

    /// The official words, or the user's templates, are not our paraphrase: a run that also
    /// has MemoryBench's checkout does not list this judge among its paraphrased prompts.
    fn upstream_messages(
        &self,
        _upstream: &Upstream,
        lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        match self.words {
            JudgeWords::Ours => None,
            JudgeWords::Supplied(_) | JudgeWords::Official(_) => Some(Ok(self.messages(lang))),
        }
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

/// The template key of abstention questions (whatever their type).
pub const ABSTENTION: &str = "abstention";

/// The placeholders every template holds, filled with the question, the reference (answer,
/// rubric or explanation) and the model's response.
pub const PLACEHOLDERS: [&str; 3] = ["{question}", "{answer}", "{response}"];

/// Most bytes of a judge prompts file.
const FILE_LIMIT: u64 = 1 << 20;

/// Judge templates supplied by the user (`--judge-prompts FILE`): a JSON object with one
/// template per question type (`single-session-user`, …, `knowledge-update`) and one for
/// `abstention`, each holding `{question}`, `{answer}` and `{response}` once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgePrompts {
    templates: BTreeMap<String, String>,
}

/// Why a judge prompts file was refused.
#[derive(Debug, thiserror::Error)]
pub enum JudgePromptsError {
    /// The file could not be read.
    #[error("{path}: {detail}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        detail: String,
    },
    /// The file is not a JSON object of strings.
    #[error("{path}: not a JSON object of templates: {detail}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's message.
        detail: String,
    },
    /// A template is missing, unknown, or lacks a placeholder.
    #[error("{path}: {detail}")]
    Template {
        /// The file.
        path: String,
        /// What is wrong, naming the key.
        detail: String,
    },
}

impl JudgePrompts {
    /// The keys a file must hold: every question type, then `abstention`.
    pub fn keys() -> impl Iterator<Item = &'static str> {
        QuestionType::ALL
            .iter()
            .map(|t| t.as_str())
            .chain(std::iter::once(ABSTENTION))
    }

    /// Reads and checks the templates in `path`.
    pub fn from_file(path: &Path) -> Result<JudgePrompts, JudgePromptsError> {
        let name = path.display().to_string();
        let text =
            mb_core::files::read_text(path, FILE_LIMIT).map_err(|e| JudgePromptsError::Read {
                path: name.clone(),
                detail: e.to_string(),
            })?;
        JudgePrompts::from_json(&text, &name)
    }

    /// Checks the templates in `text` (read from `origin`, named in errors).
    pub fn from_json(text: &str, origin: &str) -> Result<JudgePrompts, JudgePromptsError> {
        let templates: BTreeMap<String, String> =
            serde_json::from_str(text).map_err(|e| JudgePromptsError::Parse {
                path: origin.to_string(),
                detail: e.to_string(),
            })?;
        let refuse = |detail: String| JudgePromptsError::Template {
            path: origin.to_string(),
            detail,
        };
        let known: Vec<&str> = JudgePrompts::keys().collect();
        if let Some(unknown) = templates.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(refuse(format!(
                "unknown key {:?} (known: {})",
                mb_core::excerpt(unknown, 100),
                known.join(", ")
            )));
        }
        for key in &known {
            let template = templates
                .get(*key)
                .ok_or_else(|| refuse(format!("no template for {key}")))?;
            for placeholder in PLACEHOLDERS {
                if template.matches(placeholder).count() != 1 {
                    return Err(refuse(format!(
                        "the {key} template must hold {placeholder} exactly once"
                    )));
                }
            }
        }
        Ok(JudgePrompts { templates })
    }

    /// The template of `key` filled in one pass (a placeholder inside a filled value stays as
    /// written).
    fn fill(&self, key: &str, question: &str, answer: &str, response: &str) -> String {
        let template = self.templates.get(key).map_or("", String::as_str);
        let mut out =
            String::with_capacity(template.len() + question.len() + answer.len() + response.len());
        let mut rest = template;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let tail = &rest[start..];
            let value = [
                ("{question}", question),
                ("{answer}", answer),
                ("{response}", response),
            ]
            .into_iter()
            .find(|(placeholder, _)| tail.starts_with(placeholder));
            match value {
                Some((placeholder, value)) => {
                    out.push_str(value);
                    rest = &tail[placeholder.len()..];
                }
                None => {
                    out.push('{');
                    rest = &tail[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates() -> BTreeMap<String, String> {
        JudgePrompts::keys()
            .map(|k| {
                (
                    k.to_string(),
                    format!("[{k}] Q={{question}} A={{answer}} R={{response}}"),
                )
            })
            .collect()
    }

    #[test]
    fn supplied_templates_are_filled_in_one_pass() {
        let text = serde_json::to_string(&templates()).unwrap();
        let prompts = JudgePrompts::from_json(&text, "p.json").unwrap();
        assert_eq!(
            prompts.fill("knowledge-update", "q {answer}", "a", "r"),
            "[knowledge-update] Q=q {answer} A=a R=r"
        );
        let judge = LongMemEvalJudge {
            question_type: QuestionType::TemporalReasoning,
            abstention: true,
            question: "q".into(),
            answer: "a".into(),
            hypothesis: "h".into(),
            words: JudgeWords::Supplied(Arc::new(prompts)),
        };
        assert_eq!(
            judge.messages(Lang::En)[0].content,
            "[abstention] Q=q A=a R=h"
        );
    }

    #[test]
    fn a_file_missing_a_template_or_a_placeholder_is_refused_naming_the_key() {
        let mut missing = templates();
        missing.remove("multi-session");
        let error = JudgePrompts::from_json(&serde_json::to_string(&missing).unwrap(), "p.json")
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("p.json: no template for multi-session"),
            "{error}"
        );
        let mut broken = templates();
        broken.insert("abstention".into(), "no placeholders".into());
        let error = JudgePrompts::from_json(&serde_json::to_string(&broken).unwrap(), "p.json")
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("abstention template must hold {question}"),
            "{error}"
        );
        let mut extra = templates();
        extra.insert("temporal".into(), "x".into());
        let error =
            JudgePrompts::from_json(&serde_json::to_string(&extra).unwrap(), "p.json").unwrap_err();
        assert!(
            error.to_string().contains("unknown key \"temporal\""),
            "{error}"
        );
        assert!(JudgePrompts::from_json("[1]", "p.json").is_err());
    }
}
