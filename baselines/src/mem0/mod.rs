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
use mb_engine::{Batch, NewRecord, Record, RecordId};
use mb_llm::{Message, Role};
use mb_upstream::AnswerOf;

use crate::embedding::{embed_text, embed_texts};
pub mod ops;

use crate::curation::{Metadata, METADATA};
use crate::error::MemoryError;
pub use crate::history::HistoryEvent;
use crate::history::MemoryEventKind;
use crate::store::{analyzer, open_embedding_memory, retrieved, stats};
use crate::system::{
    CorpusMemory, CorpusUnit, MemoryContext, MemoryStats, MemorySystem, Retrieved, TrainingDialog,
};
use ops::{DecideMemoryUpdates, ExtractFacts, StoredMemory};

const DOC_ID: &str = "doc_id";
const TURNS: &str = "turns";
const NEXT_EVENT: &str = "next_history";
/// Prefix of the history entries' state keys (`history/<n>`, zero-padded to sort in order).
const HISTORY: &str = "history/";

fn history_key(n: u64) -> String {
    format!("{HISTORY}{n:012}")
}

/// The state key of the record history entry `n` is about ([`HistoryEvent::record`]).
fn history_record_key(n: u64) -> String {
    format!("history_record/{n:012}")
}

/// Adds history entry `n` to `batch`, with its record under its own key.
fn log(batch: &mut Batch, n: u64, entry: &HistoryEvent) -> Result<(), MemoryError> {
    batch.put_state(history_key(n), entry)?;
    if let Some(record) = entry.record {
        batch.put_state(history_record_key(n), &record.0)?;
    }
    Ok(())
}
const OPERATIONS: &str = "llm_operations";
/// Memories shown to the update step per fact (upstream's search limit).
const PER_FACT: usize = 5;

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

    /// Upstream's `add`: facts of `messages`, decisions against similar memories, applied
    /// (memories added or rewritten carry `metadata`; a rewritten one keeps its own when none
    /// is given). Returns the ids of the memories added or updated.
    async fn add(
        &self,
        messages: Vec<Message>,
        lang: Lang,
        turn: Option<&str>,
        metadata: Option<&Metadata>,
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
        let mut temporary: Vec<Record> = Vec::new();
        for vector in &vectors {
            for hit in
                engine.search_vector(namespace, self.embedder.model_id(), vector, PER_FACT)?
            {
                if !temporary.iter().any(|seen| seen.id == hit.record.id) {
                    temporary.push(hit.record);
                }
            }
        }
        let existing = temporary
            .iter()
            .enumerate()
            .map(|(i, record)| StoredMemory {
                id: i.to_string(),
                text: record.text.clone(),
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
            let record = |text: &str, vector: Vec<f32>, doc_id: String, old: Option<&Record>| {
                let mut record = NewRecord::new(text)
                    .with_attribute(DOC_ID, doc_id)
                    .with_vector(self.embedder.model_id(), vector);
                if let Some(turn) = turn {
                    record = record.with_attribute(TURNS, turn);
                }
                let kept = old.and_then(|old| old.attribute(METADATA));
                match (metadata, kept) {
                    (Some(metadata), _) => metadata.stamp(record),
                    (None, Some(kept)) => record.with_attribute(METADATA, kept),
                    (None, None) => record,
                }
            };
            let doc_id = |old: &Record| old.attribute(DOC_ID).unwrap_or_default().to_string();
            let history = match (event.event, target) {
                (MemoryEventKind::Add, _) => {
                    let doc_id = format!("mem{next}");
                    batch.put(record(&event.text, vector, doc_id.clone(), None));
                    touched.push(doc_id.clone());
                    Some((doc_id, None, None, Some(event.text.clone())))
                }
                (MemoryEventKind::Update, Some(old)) => {
                    let id = doc_id(old);
                    batch.update(old.id, record(&event.text, vector, id.clone(), Some(old)));
                    touched.push(id.clone());
                    let new = Some(event.text.clone());
                    Some((id, Some(old.id), Some(old.text.clone()), new))
                }
                (MemoryEventKind::Delete, Some(old)) => {
                    batch.delete(old.id);
                    Some((doc_id(old), Some(old.id), Some(old.text.clone()), None))
                }
                // NONE, or an id the update step made up (upstream logs and skips it).
                _ => None,
            };
            if let Some((memory, record, old_memory, new_memory)) = history {
                let entry = HistoryEvent {
                    memory,
                    event: event.event,
                    old_memory,
                    new_memory,
                    at_ms: now,
                    record,
                };
                log(&mut batch, next, &entry)?;
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
        let messages = dialog.messages.to_vec();
        self.add(messages, dialog.lang, None, dialog.metadata)
            .await?;
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
                    .add(vec![message], self.context.lang, Some(&turn.dia_id), None)
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

    fn log_edit(
        &self,
        batch: &mut Batch,
        before: &Record,
        after: Option<&str>,
    ) -> Result<(), MemoryError> {
        let next: u64 = self
            .context
            .engine
            .get_state(&self.context.namespace, NEXT_EVENT)?
            .unwrap_or(0);
        let entry = HistoryEvent {
            memory: before.attribute(DOC_ID).unwrap_or_default().to_string(),
            event: match after {
                Some(_) => MemoryEventKind::Update,
                None => MemoryEventKind::Delete,
            },
            old_memory: Some(before.text.clone()),
            new_memory: after.map(str::to_string),
            at_ms: mb_core::clock::now_ms(),
            record: Some(before.id),
        };
        log(batch, next, &entry)?;
        batch.put_state(NEXT_EVENT, &(next + 1))?;
        Ok(())
    }

    /// The history log from entry `since` on, in order: entries are numbered without gaps
    /// (`NEXT_EVENT` is the next number), so only those asked for are read.
    fn history(&self, since: u64) -> Result<Option<Vec<HistoryEvent>>, MemoryError> {
        let (engine, namespace) = (&self.context.engine, &self.context.namespace);
        let end = self.history_len()?;
        let mut events = Vec::with_capacity(end.saturating_sub(since).min(1 << 16) as usize);
        for n in since..end {
            let Some(mut event) = engine.get_state::<HistoryEvent>(namespace, &history_key(n))?
            else {
                continue;
            };
            event.record = engine
                .get_state::<u64>(namespace, &history_record_key(n))?
                .map(RecordId);
            events.push(event);
        }
        Ok(Some(events))
    }

    fn history_len(&self) -> Result<u64, MemoryError> {
        let (engine, namespace) = (&self.context.engine, &self.context.namespace);
        Ok(engine.get_state(namespace, NEXT_EVENT)?.unwrap_or(0))
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
