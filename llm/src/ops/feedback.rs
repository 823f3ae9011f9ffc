//! The simulated user who reacts to the assistant's answers (MemoryBench's feedback agent).

use mb_core::Lang;
use mb_upstream::{Upstream, UpstreamError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::handling::{read_json, JsonReading};
use super::text::terms;
use super::Operation;
use crate::{extract_json, Message, ResponseFormat, Role, Sampling};

/// The user's implicit reaction to an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImplicitAction {
    /// Approves of the answer.
    Like,
    /// Disapproves of it.
    Dislike,
    /// Copies it for use elsewhere (strong approval).
    Copy,
    /// No reaction.
    None,
}

/// Whether the user goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Behaviour {
    /// The user writes again.
    ContinueConversation,
    /// The user is done.
    EndConversation,
}

/// The simulated user's feedback on the last answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feedback {
    /// Why the user reacts this way.
    pub reasoning: String,
    /// The implicit action.
    pub implicit_action: ImplicitAction,
    /// Continue or end.
    pub behavior: Behaviour,
    /// What the user writes next, if anything.
    #[serde(default)]
    pub response: Option<String>,
}

impl Feedback {
    /// Whether the conversation ends here.
    pub fn should_end(&self) -> bool {
        self.behavior == Behaviour::EndConversation
    }
}

/// Who the simulated user is, per dataset: persona, expertise and what they judge answers by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserPersona {
    /// Who the user is, e.g. "someone looking for reliable legal information".
    pub persona: String,
    /// The domain knowledge they bring.
    pub expertise: String,
    /// What a good answer must do.
    pub criteria: Vec<String>,
}

/// One round of simulated feedback on the assistant's last answer.
///
/// Offline, the rule-based simulator MemoryBench uses for LoCoMo and DialSim: a correct answer
/// gets `like` and ends the conversation, a wrong one gets `dislike` and a request to try
/// again. Correctness is the caller's verdict (from the dataset's metric, see
/// [`SimulateFeedback::with_verdict`]); without one, token F1 against the reference above 0.5
/// (LoCoMo's rule); without either, the conversation ends with no reaction. Fallback on
/// unusable output: end the conversation with no reaction, as upstream.
///
/// With `--upstream` and the row ([`SimulateFeedback::with_row`]), the request is upstream's
/// own: its dataset evaluator's prompts and its feedback schema, read from the checkout.
#[derive(Debug, Clone)]
pub struct SimulateFeedback {
    persona: UserPersona,
    task: String,
    conversation: Vec<Message>,
    evaluation_context: Option<String>,
    reference: Option<String>,
    verdict: Option<bool>,
    row: Option<SimulatedRow>,
}

/// What upstream's evaluators build their request from: the row's dataset name and its
/// evaluation metadata.
#[derive(Debug, Clone)]
struct SimulatedRow {
    dataset: String,
    info: Map<String, Value>,
}

impl SimulateFeedback {
    /// Feedback on the last assistant message of `conversation` for a user described by
    /// `persona`, whose task is `task`.
    pub fn new(persona: UserPersona, task: impl Into<String>, conversation: Vec<Message>) -> Self {
        SimulateFeedback {
            persona,
            task: task.into(),
            conversation,
            evaluation_context: None,
            reference: None,
            verdict: None,
            row: None,
        }
    }

    /// The row the conversation is about: its `dataset` name and evaluation metadata `info`,
    /// from which upstream's evaluator for that dataset builds its request (sent when the run's
    /// wording is upstream's; the paraphrase uses the persona and reference instead).
    pub fn with_row(mut self, dataset: impl Into<String>, info: Map<String, Value>) -> Self {
        self.row = Some(SimulatedRow {
            dataset: dataset.into(),
            info,
        });
        self
    }

    /// Ground truth shown to the simulator (reference answer, checklist, …) and used offline.
    pub fn with_reference(
        mut self,
        reference: impl Into<String>,
        context: impl Into<String>,
    ) -> Self {
        self.reference = Some(reference.into());
        self.evaluation_context = Some(context.into());
        self
    }

    /// The dataset metric's verdict on the last answer, for the offline simulator.
    pub fn with_verdict(mut self, correct: bool) -> Self {
        self.verdict = Some(correct);
        self
    }

    fn last_answer(&self) -> &str {
        self.conversation
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map_or("", |m| m.content.as_str())
    }
}

impl Operation for SimulateFeedback {
    type Output = Feedback;

    fn name(&self) -> &'static str {
        "simulate_feedback"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let criteria: String = self
            .persona
            .criteria
            .iter()
            .map(|c| format!("- {c}\n"))
            .collect();
        let system = format!(
            "You play a user talking to an AI assistant. You are {persona}. {expertise}\n\
             Judge every answer against what you asked for at the start of the conversation, \
             and never ask again for something you already asked. Think first, then react:\n\
             1. reasoning: your assessment of the last answer;\n\
             2. implicit_action: like, dislike, copy (you would take the answer away and use it) \
             or none;\n\
             3. behavior: continue_conversation or end_conversation;\n\
             4. response: what you write next, or null when you end the conversation.\n\
             A good answer:\n{criteria}",
            persona = self.persona.persona,
            expertise = self.persona.expertise,
        );
        let history: String = self
            .conversation
            .iter()
            .filter(|m| m.role != Role::System)
            .map(|m| {
                let who = if m.role == Role::User {
                    "User"
                } else {
                    "Assistant"
                };
                format!("{who}: {}\n", m.content)
            })
            .collect();
        let context = self
            .evaluation_context
            .as_deref()
            .map(|c| format!("\nEVALUATION CONTEXT (known to you, not to the assistant):\n{c}\n"))
            .unwrap_or_default();
        let language = match lang {
            Lang::En => "Write your response in English.",
            Lang::Zh => "你的 response 必须用中文书写。",
        };
        let user = format!(
            "Predict how you, the user, react to the assistant's last answer.\n\
             Your task: {task}\nKeep your initial request in mind.\n\n\
             Conversation:\n{history}{context}\n{language}\n\
             Reply with JSON only: {{\"reasoning\": \"...\", \"implicit_action\": \
             \"like|dislike|copy|none\", \"behavior\": \"continue_conversation|end_conversation\", \
             \"response\": \"...\" or null}}",
            task = self.task,
        );
        vec![Message::system(system), Message::user(user)]
    }

    /// Upstream's evaluator's request for the row, in the row's language (`None` without a
    /// row: the paraphrase goes out and the run says so).
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        let row = self.row.as_ref()?;
        let lang = match lang {
            Lang::En => "en",
            Lang::Zh => "zh",
        };
        Some(
            upstream
                .simulator_request(&row.dataset, &self.conversation, lang, &row.info)
                .map(|request| request.messages),
        )
    }

    /// Upstream's `UserFeedback` schema, its descriptions in upstream's words, not strict.
    fn upstream_response_format(
        &self,
        upstream: &Upstream,
    ) -> Option<Result<ResponseFormat, UpstreamError>> {
        self.row.as_ref()?;
        Some(
            upstream
                .simulator_schema()
                .map(|schema| ResponseFormat::JsonSchema {
                    name: schema.name,
                    schema: schema.schema,
                    strict: false,
                }),
        )
    }

    /// Upstream's: temperature 0.7 and 1 000 tokens (`_generate_llm_based_feedback`), top-p 0.1
    /// (its client's default).
    fn sampling(&self) -> Sampling {
        Sampling {
            temperature: 0.7,
            max_tokens: 1000,
            ..Sampling::default()
        }
    }

    fn response_format(&self) -> Option<ResponseFormat> {
        Some(ResponseFormat::JsonSchema {
            name: "user-feedback".to_string(),
            schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "reasoning": {"type": "string"},
                    "implicit_action": {"enum": ["like", "dislike", "copy", "none"]},
                    "behavior": {"enum": ["continue_conversation", "end_conversation"]},
                    "response": {"type": ["string", "null"]},
                },
                "required": ["reasoning", "implicit_action", "behavior"],
            }),
            strict: false,
        })
    }

    fn parse(&self, text: &str) -> Option<Feedback> {
        serde_json::from_value(extract_json(text)?).ok()
    }

    /// The simulator's reading: the whole reply validated against the schema; anything else
    /// ends the conversation (the fallback).
    fn parse_as_upstream(&self, text: &str) -> Option<Feedback> {
        serde_json::from_value(read_json(text, JsonReading::Plain)?).ok()
    }

    fn fallback(&self) -> Feedback {
        Feedback {
            reasoning: "no usable feedback".to_string(),
            implicit_action: ImplicitAction::None,
            behavior: Behaviour::EndConversation,
            response: None,
        }
    }

    fn offline(&self, lang: Lang) -> Feedback {
        let correct = self.verdict.or_else(|| {
            let reference = self.reference.as_deref()?;
            Some(token_f1(self.last_answer(), reference, lang) > 0.5)
        });
        match (correct, lang) {
            (None, _) => self.fallback(),
            (Some(true), _) => Feedback {
                reasoning: "the answer is correct".to_string(),
                implicit_action: ImplicitAction::Like,
                behavior: Behaviour::EndConversation,
                response: Some(
                    match lang {
                        Lang::En => "That's right, thank you!",
                        Lang::Zh => "回答正确，谢谢！",
                    }
                    .to_string(),
                ),
            },
            (Some(false), _) => Feedback {
                reasoning: "the answer is wrong".to_string(),
                implicit_action: ImplicitAction::Dislike,
                behavior: Behaviour::ContinueConversation,
                response: Some(
                    match lang {
                        Lang::En => {
                            "That's not correct. Please try again and answer more accurately."
                        }
                        Lang::Zh => "回答不正确，请再想想，给出更准确的答案。",
                    }
                    .to_string(),
                ),
            },
        }
    }
}

/// Token-level F1 of two texts over their content terms (SQuAD-style, multiset overlap).
fn token_f1(prediction: &str, reference: &str, lang: Lang) -> f64 {
    let predicted = terms(prediction, lang);
    let expected = terms(reference, lang);
    if predicted.is_empty() || expected.is_empty() {
        return 0.0;
    }
    let mut remaining = expected.clone();
    let overlap = predicted
        .iter()
        .filter(|t| {
            remaining
                .iter()
                .position(|r| r == *t)
                .map(|i| remaining.swap_remove(i))
                .is_some()
        })
        .count() as f64;
    if overlap == 0.0 {
        return 0.0;
    }
    let precision = overlap / predicted.len() as f64;
    let recall = overlap / expected.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn persona() -> UserPersona {
        UserPersona {
            persona: "someone recalling details of past chats".into(),
            expertise: "You remember what was said.".into(),
            criteria: vec!["states the correct fact".into()],
        }
    }

    fn conversation(answer: &str) -> Vec<Message> {
        vec![
            Message::user("What is the name of Maya's dog?"),
            Message::assistant(answer),
        ]
    }

    #[test]
    fn offline_uses_the_verdict_then_token_f1() {
        let right = SimulateFeedback::new(persona(), "recall", conversation("Her dog is Pixel."))
            .with_reference("Pixel", "Reference answer: Pixel");
        let feedback = right.offline(Lang::En);
        assert_eq!(
            feedback.implicit_action,
            ImplicitAction::Dislike,
            "F1 of 2/3 terms: 0.5, not > 0.5"
        );
        let exact = SimulateFeedback::new(persona(), "recall", conversation("Pixel"))
            .with_reference("Pixel", "Reference answer: Pixel");
        assert!(exact.offline(Lang::En).should_end());
        let judged = SimulateFeedback::new(persona(), "recall", conversation("Her dog is Pixel."))
            .with_verdict(true);
        assert_eq!(
            judged.offline(Lang::En).implicit_action,
            ImplicitAction::Like
        );
        let unknown = SimulateFeedback::new(persona(), "recall", conversation("?"));
        assert!(unknown.offline(Lang::En).should_end());
        assert_eq!(
            unknown.offline(Lang::En).implicit_action,
            ImplicitAction::None
        );
    }

    #[test]
    fn parses_the_feedback_schema() {
        let op = SimulateFeedback::new(persona(), "recall", conversation("Pixel"));
        let feedback = op
            .parse(
                r#"{"reasoning": "ok", "implicit_action": "copy", "behavior": "end_conversation"}"#,
            )
            .unwrap();
        assert_eq!(feedback.implicit_action, ImplicitAction::Copy);
        assert_eq!(feedback.response, None);
        assert!(op
            .parse(
                r#"{"reasoning": "", "implicit_action": "love", "behavior": "end_conversation"}"#
            )
            .is_none());
        let prompt = op.messages(Lang::Zh);
        assert!(prompt[1].content.contains("中文"));
        assert!(prompt[0].content.contains("states the correct fact"));
    }

    #[test]
    fn token_f1_counts_multiset_overlap() {
        assert_eq!(token_f1("Pixel", "Pixel", Lang::En), 1.0);
        assert!((token_f1("dog dog Pixel", "Pixel dog", Lang::En) - 0.8).abs() < 1e-9);
        assert_eq!(token_f1("", "Pixel", Lang::En), 0.0);
    }
}
