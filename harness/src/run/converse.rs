//! One training dialog between the assistant and the simulated user, as upstream's dialog
//! generation (`basic.py`, `reading.py`) and its on-policy collection hold them.
//!
//! The assistant answers first (see [`Opening`]): the plain answer model, or a memory system
//! with its retrieved context. Then for up to `max − 1` rounds the simulated user reacts; unless
//! it ends the conversation, what it says is added and the plain answer model replies to the
//! dialog as recorded.

use mb_baselines::MemorySystem;
use mb_datasets::row::{Dialog, DialogMessage, Feedback, Row};
use mb_datasets::Dataset;
use mb_eval::Evaluator;
use mb_llm::ops::Answer;
use mb_llm::Message;
use serde_json::{Map, Value};

use crate::error::HarnessError;
use crate::run::feedback::react;
use crate::run::fewer_memories::answer_case;
use crate::run::RunSetup;

/// How the rounds after the first answer go.
#[derive(Debug, Clone, Copy)]
pub struct Rounds {
    /// Assistant turns at most (upstream's `max_rounds`).
    pub max: usize,
    /// The number of the first feedback round: 1 in dialog generation, 0 on-policy.
    pub first_number: i64,
    /// Whether the assistant answers the user's feedback. Upstream's on-policy loop does not
    /// (a missing `break` leaves its retry loop without appending the answer, and the dialog
    /// ends with the user's first feedback).
    pub answer_feedback: bool,
}

/// Who answers the question first, and what the dialog records of it.
#[derive(Clone, Copy)]
pub enum Opening<'a> {
    /// The plain answer model (upstream's `basic.py`).
    Plain,
    /// A memory system with `k` memories, whose prompt with the memories replaces the question
    /// in the dialog, the question kept as `origin_content` (upstream's `reading.py`, where the
    /// agent rewrites the message in place).
    PromptRecorded(&'a dyn MemorySystem, usize),
    /// A memory system with `k` memories answering as a test case is answered (fewer memories
    /// after a failure, upstream's error answer when nothing works); the dialog records the
    /// question as asked, the prompt living only in a copy (upstream's on-policy collection).
    /// Dialogs holding prompts would carry copies of old memories into the memory, and each
    /// step's prompts would retrieve and copy them again.
    QuestionRecorded(&'a dyn MemorySystem, usize),
}

/// The dialog about `row`, opened by `opening`.
pub async fn converse(
    setup: &RunSetup,
    dataset: &Dataset,
    row: &Row,
    evaluator: &dyn Evaluator,
    rounds: Rounds,
    opening: Opening<'_>,
) -> Result<Dialog, HarnessError> {
    let initial = row.input.initial_messages();
    let (mut messages, first) = match opening {
        Opening::QuestionRecorded(system, k) => {
            let case = answer_case(system, &initial, row.lang, k).await?;
            (
                initial.iter().map(plain).collect::<Vec<_>>(),
                case.answered.response,
            )
        }
        Opening::PromptRecorded(system, k) => {
            let answered = system.answer(&initial, row.lang, k).await?;
            let sent = answered
                .messages
                .iter()
                .zip(initial.iter().map(Some).chain(std::iter::repeat(None)))
                .map(|(sent, original)| {
                    let mut message = plain(sent);
                    // The prompt sent carries the memory; keep the question as it was asked.
                    if let Some(original) = original.filter(|o| o.content != sent.content) {
                        message.extra.insert(
                            "origin_content".into(),
                            Value::String(original.content.clone()),
                        );
                    }
                    message
                })
                .collect();
            (sent, answered.response)
        }
        Opening::Plain => {
            let response = setup
                .services
                .llm
                .answer
                .run(&Answer::new(initial.clone()), row.lang)
                .await?;
            (initial.iter().map(plain).collect::<Vec<_>>(), response)
        }
    };
    messages.push(plain(&Message::assistant(first)));
    let mut feedback = Vec::new();
    for round in 1..rounds.max.max(1) {
        let conversation: Vec<Message> = messages.iter().map(DialogMessage::message).collect();
        let reaction = react(dataset, row, &conversation, evaluator, &setup.services.llm).await?;
        feedback.push(Feedback {
            round: rounds.first_number + round as i64 - 1,
            actions: vec![reaction.action],
            terminated: Some(reaction.end),
            satisfaction_score: None,
        });
        // A user who ends the conversation, or has nothing to say, gets no answer.
        if reaction.end || reaction.text.is_empty() {
            break;
        }
        messages.push(plain(&Message::user(reaction.text)));
        if !rounds.answer_feedback {
            break;
        }
        let conversation: Vec<Message> = messages.iter().map(DialogMessage::message).collect();
        let reply = setup
            .services
            .llm
            .answer
            .run(&Answer::new(conversation), row.lang)
            .await?;
        messages.push(plain(&Message::assistant(reply)));
    }
    Ok(Dialog { messages, feedback })
}

fn plain(message: &Message) -> DialogMessage {
    DialogMessage {
        role: message.role,
        content: message.content.clone(),
        extra: Map::new(),
    }
}
