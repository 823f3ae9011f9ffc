//! The memory-system trait every MemoryBench baseline implements, and what flows through it.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_embed::Embedder;
use mb_engine::{Batch, Engine, Record};
use mb_llm::ops::Answer;
use mb_llm::{LlmStack, Message, Role};
use mb_upstream::AnswerOf;
use serde::{Deserialize, Serialize};

use crate::error::MemoryError;
use crate::prompt::answer_prompt;
pub use crate::settings::SystemSettings;

/// Everything a memory system needs to run: where it stores its state, its models and its
/// settings.
#[derive(Clone)]
pub struct MemoryContext {
    /// The engine holding every memory's state.
    pub engine: Arc<Engine>,
    /// This memory's namespace (one per run, set and system; corpus memories add a suffix).
    pub namespace: String,
    /// The LLM roles (answering, memory operations).
    pub llm: Arc<LlmStack>,
    /// The embedder, for systems that embed.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// The language of the rows it serves (Chinese when any dataset of the set is Chinese):
    /// selects the lexical analyzer.
    pub lang: Lang,
    /// Retrieval and analysis settings.
    pub settings: SystemSettings,
    /// The date (`YYYY-MM-DD`) prompts give as today's (Mem0's fact extraction): the run's, fixed
    /// when it starts, never read from the clock while it runs, so a recorded run replays on a
    /// later day.
    pub date: String,
}

/// A training dialog to memorize: the row it came from and its messages.
#[derive(Debug, Clone, Copy)]
pub struct TrainingDialog<'a> {
    /// The row's `test_idx` (upstream's document ids are built from it).
    pub test_idx: u64,
    /// The row's dataset.
    pub dataset: &'a str,
    /// The row's language.
    pub lang: Lang,
    /// The recorded conversation.
    pub messages: &'a [Message],
    /// What the caller attaches to every memory this dialog adds or rewrites (the memory
    /// tools' and Python's `metadata`); `None` for benchmark rows.
    pub metadata: Option<&'a crate::metadata::Metadata>,
}

/// One retrieved memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Retrieved {
    /// The memory's id in upstream's scheme (`conv_3_1`, a LoCoMo turn date, …).
    pub doc_id: String,
    /// The score the system ranked it by (BM25 score, cosine similarity, …).
    pub score: f32,
    /// The text that goes into the prompt.
    pub text: String,
    /// The corpus turns it covers (LoCoMo `dia_id`s), for retrieval metrics.
    pub turns: Vec<String>,
}

/// The answer to one question with how it was produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    /// The messages sent to the model (the last one carries the memory context).
    pub messages: Vec<Message>,
    /// The model's answer.
    pub response: String,
    /// What was retrieved, best first.
    pub retrieved: Vec<Retrieved>,
    /// Where the time went.
    pub timing: AnswerTiming,
}

/// Time spent answering one question: in the memory (retrieval, prompt assembly) and waiting
/// for the answer model.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AnswerTiming {
    /// Seconds in the memory system and engine.
    pub memory_seconds: f64,
    /// Seconds waiting for the answer model (every attempt).
    pub llm_seconds: f64,
}

/// What a memorized corpus left in the memory, so it can be deleted again and retrieval can be
/// scored against its evidence turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusMemory {
    /// The namespace it was written to.
    pub namespace: String,
    /// The units written.
    pub units: Vec<CorpusUnit>,
}

/// One memory unit made from a corpus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusUnit {
    /// Its id, as [`Retrieved::doc_id`] reports it.
    pub doc_id: String,
    /// The corpus turns (LoCoMo `dia_id`s) it covers.
    pub turns: Vec<String>,
}

impl CorpusMemory {
    /// The ids of the units written.
    pub fn doc_ids(&self) -> Vec<String> {
        self.units.iter().map(|u| u.doc_id.clone()).collect()
    }
}

/// Size of a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemoryStats {
    /// Memory units stored (documents, notes, pages, …).
    pub items: u64,
    /// Bytes of stored text.
    pub text_bytes: u64,
    /// LLM operations run to build the memory (memory role; none for the retrieval
    /// baselines), kept with the memory so a reopened memory still reports them.
    pub llm_operations: u64,
}

/// What a run notes as paraphrased when a system upstream does not have answers with
/// upstream's words.
const BEYOND_UPSTREAM: &str = "answer of a system beyond upstream";

/// A MemoryBench memory system.
///
/// State lives in the engine under the context's namespace, so a memory built once is found
/// again by a later run (upstream's memory cache). The default [`answer`](Self::answer) is
/// upstream's retrieval-augmented flow: retrieve for the last message, put the memories in the
/// RAG template in its place, and ask the answer model.
#[async_trait]
pub trait MemorySystem: Send + Sync {
    /// The context it runs in.
    fn context(&self) -> &MemoryContext;

    /// Memorizes one training dialog.
    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError>;

    /// Memorizes a conversation corpus cut into upstream's units for this system.
    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError>;

    /// The `k` memories most relevant to `query`, best first.
    async fn retrieve(
        &self,
        query: &str,
        lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError>;

    /// Removes a memorized corpus.
    fn delete_corpus(&self, corpus: &CorpusMemory) -> Result<(), MemoryError>;

    /// Size of the memory.
    fn stats(&self) -> Result<MemoryStats, MemoryError>;

    /// Whether answering a question changes what the memory holds (MemoryOS: visits warm its
    /// sessions). A run rebuilding such a memory must ask the questions it asked again.
    fn retrieval_changes_memory(&self) -> bool {
        false
    }

    /// Loses what upstream keeps only in its process until the process exits, as a copy of the
    /// memory's files taken by the process that built it does (upstream's off-policy answers
    /// each corpus dataset on such a copy). Nothing for systems that write through.
    fn lose_state_unsaved_before_exit(&self) -> Result<(), MemoryError> {
        Ok(())
    }

    /// Brings what the system derives from its records in line after one record was updated
    /// or deleted from outside it (the memory service's edit tools), given the record as it
    /// was before. Nothing for systems that derive nothing from single records.
    fn record_edited(&self, _before: &Record) -> Result<(), MemoryError> {
        Ok(())
    }

    /// Adds to `batch` (the write making the change) the system's log entry of an edit made
    /// from outside it ([`crate::curation`]): `before` the record as it was, `after` its new
    /// text (`None`: deleted). Nothing for systems that keep no history; Mem0 logs an
    /// `UPDATE` or `DELETE` as its own decisions are logged.
    fn log_edit(
        &self,
        _batch: &mut Batch,
        _before: &Record,
        _after: Option<&str>,
    ) -> Result<(), MemoryError> {
        Ok(())
    }

    /// The system's log of memory changes from entry `since` on (`0`: all of it), in order,
    /// for a system that keeps one (Mem0); `None` for the others. Reading costs the entries
    /// read, so a caller after one dialog's events asks from [`MemorySystem::history_len`]
    /// taken before it.
    fn history(
        &self,
        _since: u64,
    ) -> Result<Option<Vec<crate::history::HistoryEvent>>, MemoryError> {
        Ok(None)
    }

    /// How many entries the system's log holds (`0` without one): where the next change's
    /// entry goes.
    fn history_len(&self) -> Result<u64, MemoryError> {
        Ok(0)
    }

    /// Whether building the memory asks the memory model (Mem0's facts, A-Mem's notes,
    /// MemoryOS's summaries, ...). A memory built without it is the same whatever model the
    /// memory role names, so the memory cache does not key such a memory by that model.
    fn builds_with_the_memory_model(&self) -> bool {
        true
    }

    /// Whether a failed answer is tried again with one memory fewer each time, as upstream
    /// does for the systems whose configuration has a `retrieve_k` (the BM25 and embedding
    /// baselines, A-Mem, Mem0); the others get one attempt.
    fn retries_with_fewer_memories(&self) -> bool {
        true
    }

    /// Which of upstream's answer templates the system fills; `None` for a system upstream
    /// does not have, whose answers go out in the paraphrase even with upstream's words.
    fn upstream_answer(&self) -> Option<AnswerOf> {
        None
    }

    /// The retrieved memories as the answer template's context: one per line (each system's
    /// own rendering where upstream's differs).
    fn memory_context(&self, retrieved: &[Retrieved]) -> String {
        let texts: Vec<&str> = retrieved.iter().map(|r| r.text.as_str()).collect();
        texts.join("\n")
    }

    /// The messages sent to the model: the last message replaced by the answer template filled
    /// with [`MemorySystem::memory_context`].
    fn prompt(
        &self,
        messages: &[Message],
        retrieved: &[Retrieved],
        lang: Lang,
    ) -> Result<Vec<Message>, MemoryError> {
        answer_prompt(
            &self.context().llm.wording,
            self.upstream_answer(),
            BEYOND_UPSTREAM,
            messages,
            &self.memory_context(retrieved),
            lang,
        )
    }

    /// Answers the conversation `messages` using `k` memories.
    async fn answer(
        &self,
        messages: &[Message],
        lang: Lang,
        k: usize,
    ) -> Result<Answered, MemoryError> {
        let started = Instant::now();
        let question = last_user_text(messages);
        let retrieved = if k == 0 {
            Vec::new()
        } else {
            self.retrieve(&question, lang, k).await?
        };
        let prompt = self.prompt(messages, &retrieved, lang)?;
        let memory_seconds = started.elapsed().as_secs_f64();
        let evidence = retrieved.iter().map(|r| r.text.clone()).collect();
        let operation = Answer::new(prompt.clone()).with_evidence(question, evidence);
        let asked = Instant::now();
        let response = self.context().llm.answer.run(&operation, lang).await?;
        Ok(Answered {
            messages: prompt,
            response,
            retrieved,
            timing: AnswerTiming {
                memory_seconds,
                llm_seconds: asked.elapsed().as_secs_f64(),
            },
        })
    }
}

/// The content of the last message (upstream retrieves with it, whatever its role).
pub fn last_user_text(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .or(messages.last())
        .map(|m| m.content.clone())
        .unwrap_or_default()
}
