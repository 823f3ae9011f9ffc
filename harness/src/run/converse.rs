//! One training dialog between the assistant and the simulated user, as upstream's dialog
//! generation (`basic.py`, `reading.py`) and its on-policy collection hold them.
//!
//! The assistant answers first (see [`Opening`]): the plain answer model, or a memory system
//! with its retrieved context. Then for up to `max − 1` rounds the simulated user reacts; unless
//! it ends the conversation, what it says is added and the plain answer model replies to the
//! dialog as recorded.

use std::collections::BTreeMap;

use mb_baselines::MemorySystem;
use mb_datasets::row::{Dialog, Feedback, Row};
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
    /// What follows the user's feedback.
    pub feedback_answers: FeedbackAnswers,
}

/// What follows a simulated user's feedback that does not end the dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackAnswers {
    /// Upstream's on-policy loop: its retry loop lacks a `break`, so the answer model is asked
    /// [`DISCARDED_ASKS`] times and every answer is thrown away; the dialog ends with the
    /// user's first feedback.
    Discarded,
    /// The same dialogs, without asking the model for answers nobody keeps.
    Skipped,
    /// The assistant answers each feedback, up to the rounds' maximum: upstream's dialog
    /// generation, and what its on-policy loop meant to do.
    Answered,
}

/// How many times upstream's on-policy loop asks for the answer it discards (its `TRY_TIMES`).
pub const DISCARDED_ASKS: usize = 3;

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
    let mut extra_keys = BTreeMap::new();
    let (mut messages, first) = match opening {
        Opening::QuestionRecorded(system, k) => {
            let case = answer_case(system, &initial, row.lang, k).await?;
            (initial, case.answered.response)
        }
        Opening::PromptRecorded(system, k) => {
            let answered = system.answer(&initial, row.lang, k).await?;
            // The prompt sent carries the memory; keep the question as it was asked.
            for (position, (sent, original)) in answered.messages.iter().zip(&initial).enumerate() {
                if original.content != sent.content {
                    let origin = Value::String(original.content.clone());
                    extra_keys.insert(
                        position,
                        Map::from_iter([("origin_content".into(), origin)]),
                    );
                }
            }
            (answered.messages, answered.response)
        }
        Opening::Plain => {
            let response = setup
                .services
                .llm
                .answer
                .run(&Answer::new(initial.clone()), row.lang)
                .await?;
            (initial, response)
        }
    };
    messages.push(Message::assistant(first));
    let mut feedback = Vec::new();
    for round in 1..rounds.max.max(1) {
        let reaction = react(dataset, row, &messages, evaluator, &setup.services.llm).await?;
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
        messages.push(Message::user(reaction.text));
        let conversation = messages.clone();
        match rounds.feedback_answers {
            FeedbackAnswers::Answered => {}
            FeedbackAnswers::Skipped => break,
            FeedbackAnswers::Discarded => {
                for _ in 0..DISCARDED_ASKS {
                    setup
                        .services
                        .llm
                        .answer
                        .run(&Answer::new(conversation.clone()), row.lang)
                        .await?;
                }
                break;
            }
        }
        let reply = setup
            .services
            .llm
            .answer
            .run(&Answer::new(conversation), row.lang)
            .await?;
        messages.push(Message::assistant(reply));
    }
    Ok(Dialog {
        messages,
        extra_keys,
        feedback,
    })
}
