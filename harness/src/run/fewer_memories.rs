//! Answering one question as upstream's `predict_single_data` does: a failed answer is tried
//! again with one memory fewer each time, and a question nothing answers gets upstream's error
//! answer, is scored like any other, and the run goes on.
//!
//! Upstream catches any exception of the answer (retrieval and model calls alike). Here the
//! failures of a model — a prompt overflowing its context, a request it rejects, a server that
//! keeps failing, an unusable response, a replay that has no recording for the request (a
//! recorded run's failed attempts are not recorded, so their replay misses and backs off to
//! the attempt that was) — are answer failures. Failures of this program's own state (the
//! engine, the record cache, the embedder, a setting) stop the run: they would fail every case.
//!
//! (Not to be confused with `mb_core::retry::Backoff`, the waits between retries of a request
//! to a model or embedding endpoint.)

use std::future::Future;
use std::time::Instant;

use mb_baselines::{AnswerTiming, Answered, MemoryError, MemorySystem};
use mb_core::Lang;

use mb_llm::Message;
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;

/// Upstream's answer to a question no attempt could answer.
pub const ERROR_RESPONSE: &str = "Error: Unable to generate response.";

/// How a case's answer went when its first attempt did not succeed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnswerFailures {
    /// Attempts that failed before the answer (or before giving up).
    pub failed_attempts: u32,
    /// The last failure when every attempt failed and the case got [`ERROR_RESPONSE`].
    pub error: Option<String>,
}

impl AnswerFailures {
    /// Whether the case got the error answer.
    pub fn gave_up(&self) -> bool {
        self.error.is_some()
    }
}

/// An answered question, with its failed attempts.
pub struct CaseAnswer {
    /// The answer (the error answer, with the question as asked, when every attempt failed).
    pub answered: Answered,
    /// What failed on the way.
    pub failures: AnswerFailures,
}

/// Answers `messages` with `system` and `k` memories; when an attempt fails, systems that
/// retrieve a number of memories try again with one fewer, down to one (upstream stops before
/// trying none); others have one attempt. Errors that are not answer failures are returned.
pub async fn answer_case(
    system: &dyn MemorySystem,
    messages: &[Message],
    lang: Lang,
    k: usize,
) -> Result<CaseAnswer, HarnessError> {
    let started = Instant::now();
    let attempts: Box<dyn Iterator<Item = usize> + Send> =
        if system.retries_with_fewer_memories() && k > 0 {
            Box::new((1..=k).rev())
        } else {
            Box::new(std::iter::once(k))
        };
    let (answered, failures) =
        with_fewer_memories(attempts, |k| system.answer(messages, lang, k)).await?;
    if let Some(mut answered) = answered {
        // Failed attempts waited on the model too.
        answered.timing.llm_seconds =
            started.elapsed().as_secs_f64() - answered.timing.memory_seconds;
        return Ok(CaseAnswer { answered, failures });
    }
    if let Some(error) = &failures.error {
        tracing::warn!("no answer, scored as upstream's error answer: {error}");
    }
    Ok(CaseAnswer {
        answered: Answered {
            messages: messages.to_vec(),
            response: ERROR_RESPONSE.to_string(),
            retrieved: Vec::new(),
            timing: AnswerTiming {
                memory_seconds: 0.0,
                llm_seconds: started.elapsed().as_secs_f64(),
            },
        },
        failures,
    })
}

/// Tries `attempt` with each memory count of `sizes` in turn until one answers: an answer
/// failure is counted and the next count tried; any other error is returned. When every
/// attempt failed: `None`, with the last failure in the returned failures' `error`.
pub async fn with_fewer_memories<T, Fut>(
    sizes: impl Iterator<Item = usize> + Send,
    mut attempt: impl FnMut(usize) -> Fut + Send,
) -> Result<(Option<T>, AnswerFailures), HarnessError>
where
    Fut: Future<Output = Result<T, MemoryError>> + Send,
{
    let mut failures = AnswerFailures::default();
    let mut last = None;
    for k in sizes {
        match attempt(k).await {
            Ok(answer) => return Ok((Some(answer), failures)),
            Err(error) if is_answer_failure(&error) => {
                tracing::info!(k, "answer failed: {error}");
                failures.failed_attempts += 1;
                last = Some(error.to_string());
            }
            Err(error) => return Err(error.into()),
        }
    }
    // Only a case that got no answer carries an error (`AnswerFailures::gave_up`).
    failures.error = last;
    Ok((None, failures))
}

/// Whether `error` is a model's failure to answer (see the module documentation).
fn is_answer_failure(error: &MemoryError) -> bool {
    matches!(error, MemoryError::Llm(llm) if llm.is_answer_failure())
}

/// Refuses a run in which every case got the error answer: its scores would measure nothing.
/// The first case's error says what is wrong.
pub fn refuse_all_failed<'a>(
    failures: impl IntoIterator<Item = &'a AnswerFailures>,
) -> Result<(), HarnessError> {
    let mut first = None;
    for failure in failures {
        match &failure.error {
            None => return Ok(()),
            Some(error) => {
                first.get_or_insert(error);
            }
        }
    }
    match first {
        Some(error) => Err(HarnessError::Usage(format!(
            "every case failed to get an answer; the first: {error}"
        ))),
        None => Ok(()),
    }
}
