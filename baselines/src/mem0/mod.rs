//! Mem0 (`mem0`): facts extracted from dialogs and kept up to date by an LLM.
//!
//! For a dialog, one operation extracts facts; each fact's five nearest memories are shown,
//! under short temporary ids, to a second operation that decides ADD, UPDATE, DELETE or NONE per
//! memory; the decisions are applied in one engine batch together with their history entries
//! (old and new text, event, time), so the memory can be audited and replayed in order. A
//! corpus is added one turn at a time as upstream's `Speaker <name>says : <text>` line (role
//! `user` for the first speaker, `assistant` otherwise), as upstream does. Questions retrieve the ten nearest memories (upstream's
//! effective default) into Mem0's own prompt layout.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::corpus::{turn_line, Conversation};
use mb_datasets::dataset::CorpusFormat;
use mb_embed::Embedder;
use mb_engine::{Batch, NewRecord, RecordId};
use mb_llm::{Message, Role};
use mb_upstream::AnswerOf;
use serde::{Deserialize, Serialize};

use crate::embedding::{embed_text, embed_texts};
pub mod ops;

use crate::error::MemoryError;
use crate::store::{analyzer, open_embedding_memory, retrieved, stats};
use crate::system::{
    CorpusMemory, CorpusUnit, MemoryContext, MemoryStats, MemorySystem, Retrieved, TrainingDialog,
};
use ops::{DecideMemoryUpdates, ExtractFacts, MemoryEventKind, StoredMemory};

const DOC_ID: &str = "doc_id";
const TURNS: &str = "turns";
const NEXT_EVENT: &str = "next_history";
const OPERATIONS: &str = "llm_operations";
/// Memories shown to the update step per fact (upstream's search limit).
const PER_FACT: usize = 5;

/// One entry of the history log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEvent {
    /// The memory's id (`mem<n>`, kept across updates).
    pub memory: String,
    /// `ADD`, `UPDATE` or `DELETE`.
    pub event: MemoryEventKind,
    /// Text before the event.
    pub old_memory: Option<String>,
    /// Text after it.
    pub new_memory: Option<String>,
    /// When it happened (milliseconds since the epoch).
    pub at_ms: i64,
}

/// The Mem0 memory.
pub struct Mem0 {
    context: MemoryContext,
    embedder: Arc<dyn Embedder>,
}

impl Mem0 {
    /// A Mem0 memory in the context's namespace; the context must carry an embedder.
    pub fn new(context: MemoryContext) -> Result<Mem0, MemoryError> {
        let embedder = open_embedding_memory(&context, "mem0", analyzer(&context))?;
        Ok(Mem0 { context, embedder })
    }

    /// The history log in order.
    pub fn history(&self) -> Result<Vec<HistoryEvent>, MemoryError> {
        let engine = &self.context.engine;
        let mut keys = engine.state_keys(&self.context.namespace, "history/")?;
        keys.sort();
        keys.iter()
            .filter_map(|key| engine.get_state(&self.context.namespace, key).transpose())
            .collect::<Result<_, _>>()
            .map_err(Into::into)
    }

    /// Upstream's `add`: facts of `messages`, decisions against similar memories, applied.
    /// Returns the ids of the memories added or updated.
    async fn add(
        &self,
        messages: Vec<Message>,
        lang: Lang,
        turn: Option<&str>,
    ) -> Result<Vec<String>, MemoryError> {
        let engine = &self.context.engine;
        let namespace = &self.context.namespace;
        let memory = &self.context.llm.memory;
        let facts = memory
            .run(
                &ExtractFacts::new(messages, self.context.date.clone()),
                lang,
            )
            .await?;
        let mut operations = 1;
        if facts.is_empty() {
            self.count_operations(Batch::new(), operations)?;
            return Ok(Vec::new());
        }
        let texts: Vec<String> = facts.iter().map(|f| f.replace('\n', " ")).collect();
        let vectors = embed_texts(&self.embedder, texts).await?;
        // Existing memories near any fact, deduplicated, under temporary ids "0", "1", …
        let mut temporary: Vec<(RecordId, String, String)> = Vec::new();
        for vector in &vectors {
            for hit in
                engine.search_vector(namespace, self.embedder.model_id(), vector, PER_FACT)?
            {
                if !temporary.iter().any(|(id, _, _)| *id == hit.record.id) {
                    let doc_id = hit.record.attribute(DOC_ID).unwrap_or_default().to_string();
                    temporary.push((hit.record.id, doc_id, hit.record.text.clone()));
                }
            }
        }
        let existing = temporary
            .iter()
            .enumerate()
            .map(|(i, (_, _, text))| StoredMemory {
                id: i.to_string(),
                text: text.clone(),
            })
            .collect();
        let events = memory
            .run(&DecideMemoryUpdates::new(existing, facts.clone()), lang)
            .await?;
        operations += 1;
        let fact_vectors: HashMap<&str, &Vec<f32>> = facts
            .iter()
            .map(String::as_str)
            .zip(vectors.iter())
            .collect();
        let mut batch = Batch::new();
        let mut next: u64 = engine.get_state(namespace, NEXT_EVENT)?.unwrap_or(0);
        let now = mb_core::clock::now_ms();
        let mut touched = Vec::new();
        for event in events {
            if event.text.trim().is_empty() {
                continue;
            }
            let vector = match fact_vectors.get(event.text.as_str()) {
                Some(v) => (*v).clone(),
                None if matches!(event.event, MemoryEventKind::Add | MemoryEventKind::Update) => {
                    embed_text(&self.embedder, event.text.replace('\n', " ")).await?
                }
                None => Vec::new(),
            };
            let target = event
                .id
                .parse::<usize>()
                .ok()
                .and_then(|i| temporary.get(i));
            let record = |text: &str, vector: Vec<f32>, doc_id: String| {
                let mut record = NewRecord::new(text)
                    .with_attribute(DOC_ID, doc_id)
                    .with_vector(self.embedder.model_id(), vector);
                if let Some(turn) = turn {
                    record = record.with_attribute(TURNS, turn);
                }
                record
            };
            let history = match (event.event, target) {
                (MemoryEventKind::Add, _) => {
                    let doc_id = format!("mem{next}");
                    batch.put(record(&event.text, vector, doc_id.clone()));
                    touched.push(doc_id.clone());
                    Some((doc_id, None, Some(event.text.clone())))
                }
                (MemoryEventKind::Update, Some((id, doc_id, old))) => {
                    batch.update(*id, record(&event.text, vector, doc_id.clone()));
                    touched.push(doc_id.clone());
                    Some((doc_id.clone(), Some(old.clone()), Some(event.text.clone())))
                }
                (MemoryEventKind::Delete, Some((id, doc_id, old))) => {
                    batch.delete(*id);
                    Some((doc_id.clone(), Some(old.clone()), None))
                }
                // NONE, or an id the update step made up (upstream logs and skips it).
                _ => None,
            };
            if let Some((memory, old_memory, new_memory)) = history {
                batch.put_state(
                    format!("history/{next:012}"),
                    &HistoryEvent {
                        memory,
                        event: event.event,
                        old_memory,
                        new_memory,
                        at_ms: now,
                    },
                )?;
                next += 1;
            }
        }
        batch.put_state(NEXT_EVENT, &next)?;
        self.count_operations(batch, operations)?;
        Ok(touched)
    }

    /// Writes `batch` with the LLM-operation counter advanced by `operations`.
    fn count_operations(&self, mut batch: Batch, operations: u64) -> Result<(), MemoryError> {
        let engine = &self.context.engine;
        let done: u64 = engine
            .get_state(&self.context.namespace, OPERATIONS)?
            .unwrap_or(0);
        batch.put_state(OPERATIONS, &(done + operations))?;
        engine.write(&self.context.namespace, batch)?;
        Ok(())
    }
}

#[async_trait]
impl MemorySystem for Mem0 {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let messages = dialog.messages.iter().map(|m| m.message()).collect();
        self.add(messages, dialog.lang, None).await?;
        Ok(())
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        _format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        let mut units = Vec::new();
        for session in &corpus.sessions {
            for turn in &session.turns {
                let role = if corpus
                    .speaker_a
                    .as_deref()
                    .is_none_or(|a| a == turn.speaker)
                {
                    Role::User
                } else {
                    Role::Assistant
                };
                let message = Message {
                    role,
                    content: turn_line(turn),
                };
                for doc_id in self
                    .add(vec![message], self.context.lang, Some(&turn.dia_id))
                    .await?
                {
                    units.push(CorpusUnit {
                        doc_id,
                        turns: vec![turn.dia_id.clone()],
                    });
                }
            }
        }
        Ok(CorpusMemory {
            namespace: self.context.namespace.clone(),
            units,
        })
    }

    async fn retrieve(
        &self,
        query: &str,
        _lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        let vector = embed_text(&self.embedder, query.replace('\n', " ")).await?;
        let hits = self.context.engine.search_vector(
            &self.context.namespace,
            self.embedder.model_id(),
            &vector,
            k,
        )?;
        Ok(hits.into_iter().map(retrieved).collect())
    }

    fn upstream_answer(&self) -> Option<AnswerOf> {
        Some(AnswerOf::Mem0)
    }

    /// Mem0's `User Memories:` list: each memory as `- <text>` on its own line.
    fn memory_context(&self, retrieved: &[Retrieved]) -> String {
        retrieved
            .iter()
            .map(|r| format!("- {}\n", r.text))
            .collect()
    }

    fn delete_corpus(&self, corpus: &CorpusMemory) -> Result<(), MemoryError> {
        crate::store::delete_units(&self.context.engine, &corpus.namespace, &corpus.doc_ids())
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        let mut stats = stats(&self.context.engine, &self.context.namespace)?;
        stats.llm_operations = self
            .context
            .engine
            .get_state(&self.context.namespace, OPERATIONS)?
            .unwrap_or(0);
        Ok(stats)
    }
}
