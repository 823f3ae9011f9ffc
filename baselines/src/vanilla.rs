//! Vanilla (`wo_memory`): no memory. On corpus datasets it answers with as much of the
//! conversation as fits the model's context, as upstream's long-context fallback does.
//!
//! The number of sessions that fits is found once per corpus by a binary search over
//! `0..=sessions` on the first question; each question then tries that many sessions, then
//! one fewer, down to none. Only a context-overflow error counts as "does not fit" (upstream
//! treats any error so, which turns an outage into silently shorter contexts).

use std::time::Instant;

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_llm::ops::Answer;
use mb_llm::{LlmError, Message};
use mb_upstream::AnswerOf;
use parking_lot::{Mutex, RwLock};

use crate::error::MemoryError;
use crate::prompt::answer_prompt;
use crate::system::{
    last_user_text, AnswerTiming, Answered, CorpusMemory, MemoryContext, MemoryStats, MemorySystem,
    Retrieved, TrainingDialog,
};
use crate::units::long_context;

/// The memory-less baseline.
pub struct Vanilla {
    context: MemoryContext,
    corpus: RwLock<Option<Conversation>>,
    fitting_sessions: Mutex<Option<usize>>,
}

impl Vanilla {
    /// The baseline in `context` (which it never writes to).
    pub fn new(context: MemoryContext) -> Vanilla {
        Vanilla {
            context,
            corpus: RwLock::new(None),
            fitting_sessions: Mutex::new(None),
        }
    }

    /// Answers with the first `sessions` sessions as context; `None` when they do not fit.
    async fn try_sessions(
        &self,
        corpus: &Conversation,
        messages: &[Message],
        lang: Lang,
        sessions: usize,
    ) -> Result<Option<Answered>, MemoryError> {
        let started = Instant::now();
        let context = long_context(corpus, sessions);
        let prompt = answer_prompt(
            &self.context.llm.wording,
            Some(AnswerOf::LongContext),
            "answer",
            messages,
            &context,
            lang,
        )?;
        let evidence = context.lines().map(str::to_string).collect();
        let operation =
            Answer::new(prompt.clone()).with_evidence(last_user_text(messages), evidence);
        let memory_seconds = started.elapsed().as_secs_f64();
        let asked = Instant::now();
        match self.context.llm.answer.run(&operation, lang).await {
            Ok(response) => Ok(Some(Answered {
                messages: prompt,
                response,
                retrieved: Vec::new(),
                timing: AnswerTiming {
                    memory_seconds,
                    llm_seconds: asked.elapsed().as_secs_f64(),
                },
            })),
            Err(LlmError::ContextOverflow { .. }) => Ok(None),
            Err(other) => Err(other.into()),
        }
    }

    /// The largest session count whose prompt fits, by binary search on `messages`.
    async fn fit(
        &self,
        corpus: &Conversation,
        messages: &[Message],
        lang: Lang,
    ) -> Result<usize, MemoryError> {
        let (mut low, mut high) = (0usize, corpus.sessions.len());
        let mut best = 0;
        while low <= high {
            let middle = (low + high) / 2;
            if self
                .try_sessions(corpus, messages, lang, middle)
                .await?
                .is_some()
            {
                best = middle;
                low = middle + 1;
            } else if middle == 0 {
                break;
            } else {
                high = middle - 1;
            }
        }
        Ok(best)
    }
}

#[async_trait]
impl MemorySystem for Vanilla {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    fn builds_with_the_memory_model(&self) -> bool {
        false
    }

    async fn memorize_dialog(&self, _dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        Ok(())
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        _format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        *self.corpus.write() = Some(corpus.clone());
        *self.fitting_sessions.lock() = None;
        Ok(CorpusMemory {
            namespace: self.context.namespace.clone(),
            units: Vec::new(),
        })
    }

    async fn retrieve(
        &self,
        _query: &str,
        _lang: Lang,
        _k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        Ok(Vec::new())
    }

    fn delete_corpus(&self, _corpus: &CorpusMemory) -> Result<(), MemoryError> {
        *self.corpus.write() = None;
        *self.fitting_sessions.lock() = None;
        Ok(())
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        Ok(MemoryStats::default())
    }

    /// Upstream's Vanilla has no `retrieve_k`: one attempt (over a corpus, one per number of
    /// sessions that may fit).
    fn retries_with_fewer_memories(&self) -> bool {
        false
    }

    async fn answer(
        &self,
        messages: &[Message],
        lang: Lang,
        _k: usize,
    ) -> Result<Answered, MemoryError> {
        let started = Instant::now();
        let corpus = self.corpus.read().clone();
        let Some(corpus) = corpus else {
            let operation = Answer::new(messages.to_vec());
            let asked = Instant::now();
            let response = self.context.llm.answer.run(&operation, lang).await?;
            return Ok(Answered {
                messages: messages.to_vec(),
                response,
                retrieved: Vec::new(),
                timing: AnswerTiming {
                    memory_seconds: 0.0,
                    llm_seconds: asked.elapsed().as_secs_f64(),
                },
            });
        };
        let fitted = *self.fitting_sessions.lock();
        let fitted = match fitted {
            Some(sessions) => sessions,
            None => {
                let sessions = self.fit(&corpus, messages, lang).await?;
                *self.fitting_sessions.lock() = Some(sessions);
                sessions
            }
        };
        for sessions in (0..=fitted).rev() {
            if let Some(mut answered) = self.try_sessions(&corpus, messages, lang, sessions).await?
            {
                // Fitting and failed attempts waited on the model too.
                answered.timing.llm_seconds =
                    started.elapsed().as_secs_f64() - answered.timing.memory_seconds;
                return Ok(answered);
            }
        }
        Err(MemoryError::Llm(LlmError::ContextOverflow {
            url: "answer model".into(),
            detail: "the question alone exceeds the context window".into(),
        }))
    }
}
