//! A-Mem (`a_mem`): notes with embeddings, retrieved by LLM-chosen keywords.
//!
//! Parity mode (default) is A-Mem as MemoryBench wires it: one note per dialog message
//! (`Speaker <role> says: …`, timestamp `<test_idx>_<i>`) or corpus turn (the turn line, its
//! `<date> Turn <n>` as timestamp), with default attributes (context `General`, no keywords,
//! tags or links) because upstream's analysis and evolution never run; a question is turned into
//! keywords by one LLM operation, and the notes closest to those keywords are rendered as
//! upstream renders them. Full mode (`evolution = true` in `configs/memory/a_mem.toml`) is the
//! original A-Mem design: each new note is analyzed (keywords, context, tags) and evolved against
//! its five nearest notes (links to them, refreshed neighbour context and tags), atomically with
//! its insertion; retrieval follows the links.
//!
//! A note is an engine record (content, timestamp, vector); its mutable attributes live in the
//! namespace state under `note/<id>`, written in the same batch as the note.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::corpus::{turn_line, Conversation};
use mb_datasets::dataset::CorpusFormat;
use mb_embed::Embedder;
use mb_engine::{Batch, NewRecord, Record};
use mb_upstream::python::repr_str_list;
use mb_upstream::AnswerOf;
use serde::{Deserialize, Serialize};

pub mod ops;

use crate::curation::{stamped, Metadata};
use crate::embedding::{embed_text, embed_texts};
use crate::error::MemoryError;
use crate::settings::OwnSettings;
use crate::store::{analyzer, delete_units, open_embedding_memory, stats};
use crate::system::{
    CorpusMemory, CorpusUnit, MemoryContext, MemoryStats, MemorySystem, Retrieved, TrainingDialog,
};
use ops::{AnalyzeNote, EvolveNote, NoteAttributes, NoteView, QueryKeywords};

const NOTE_ID: &str = "doc_id";
const TIMESTAMP: &str = "timestamp";
const TURNS: &str = "turns";
const NEXT_NOTE: &str = "next_note";
const OPERATIONS: &str = "llm_operations";
/// Neighbours a new note is evolved against (upstream's k).
const NEIGHBOURS: usize = 5;
/// Keywords asked for a question.
const QUERY_KEYWORDS: usize = 8;

/// A note's mutable attributes (absent: upstream's defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct NoteMeta {
    keywords: Vec<String>,
    context: String,
    tags: Vec<String>,
    links: Vec<String>,
    evolution_history: Vec<String>,
}

impl Default for NoteMeta {
    fn default() -> Self {
        NoteMeta {
            keywords: Vec::new(),
            context: "General".to_string(),
            tags: Vec::new(),
            links: Vec::new(),
            evolution_history: Vec::new(),
        }
    }
}

/// A-Mem's keys in its settings file (`configs/memory/a_mem.toml`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct AMemSettings {
    /// Analyze and evolve notes as the original A-Mem does (upstream's MemoryBench wiring
    /// never runs either; `false` reproduces that).
    pub evolution: bool,
}

impl AMemSettings {
    /// Settings analyzing and evolving notes (`evolution`) or not.
    pub fn new(evolution: bool) -> AMemSettings {
        AMemSettings { evolution }
    }
}

impl OwnSettings for AMemSettings {}

/// The A-Mem memory.
pub struct AMem {
    context: MemoryContext,
    embedder: Arc<dyn Embedder>,
    evolution: bool,
}

impl AMem {
    /// An A-Mem memory in the context's namespace; the context must carry an embedder.
    pub fn new(context: MemoryContext) -> Result<AMem, MemoryError> {
        let embedder = open_embedding_memory(&context, "a_mem", analyzer(&context))?;
        let evolution = context.settings.own::<AMemSettings>()?.evolution;
        Ok(AMem {
            context,
            embedder,
            evolution,
        })
    }

    fn meta(&self, note: &str) -> Result<NoteMeta, MemoryError> {
        Ok(self
            .context
            .engine
            .get_state(&self.context.namespace, &format!("note/{note}"))?
            .unwrap_or_default())
    }

    /// Adds notes `(content, timestamp, turns)` one by one (each evolution sees the notes
    /// before it); returns their ids.
    async fn add_notes(
        &self,
        notes: Vec<(String, String, Vec<String>)>,
        lang: Lang,
        metadata: Option<&Metadata>,
    ) -> Result<Vec<String>, MemoryError> {
        let engine = &self.context.engine;
        let namespace = &self.context.namespace;
        let texts: Vec<String> = notes.iter().map(|(c, _, _)| c.clone()).collect();
        let vectors = embed_texts(&self.embedder, texts).await?;
        let mut ids = Vec::with_capacity(notes.len());
        for ((content, timestamp, turns), vector) in notes.into_iter().zip(vectors) {
            let next: u64 = engine.get_state(namespace, NEXT_NOTE)?.unwrap_or(0);
            let id = format!("note{next}");
            let mut batch = Batch::new();
            batch.put_state(NEXT_NOTE, &(next + 1))?;
            if self.evolution {
                self.evolve(&mut batch, &id, &content, &timestamp, &vector, lang)
                    .await?;
            }
            let mut record = stamped(NewRecord::new(content), metadata)
                .with_attribute(NOTE_ID, id.clone())
                .with_attribute(TIMESTAMP, timestamp)
                .with_vector(self.embedder.model_id(), vector);
            if !turns.is_empty() {
                record = record.with_attribute(TURNS, turns.join(","));
            }
            batch.put(record);
            engine.write(namespace, batch)?;
            ids.push(id);
        }
        Ok(ids)
    }

    /// Full mode: analyzes the new note and evolves it against its nearest notes, adding the
    /// state changes to `batch`.
    async fn evolve(
        &self,
        batch: &mut Batch,
        id: &str,
        content: &str,
        timestamp: &str,
        vector: &[f32],
        lang: Lang,
    ) -> Result<(), MemoryError> {
        let memory = &self.context.llm.memory;
        let NoteAttributes {
            keywords,
            context,
            tags,
        } = memory.run(&AnalyzeNote::new(content), lang).await?;
        let mut meta = NoteMeta {
            keywords,
            context,
            tags,
            ..NoteMeta::default()
        };
        let hits = self.context.engine.search_vector(
            &self.context.namespace,
            self.embedder.model_id(),
            vector,
            NEIGHBOURS,
        )?;
        let mut operations = 1;
        if !hits.is_empty() {
            let neighbours: Vec<(String, NoteMeta, Record)> = hits
                .into_iter()
                .map(|h| {
                    let note = h.record.attribute(NOTE_ID).unwrap_or_default().to_string();
                    let meta = self.meta(&note)?;
                    Ok((note, meta, h.record))
                })
                .collect::<Result<_, MemoryError>>()?;
            let view = |content: &str, meta: &NoteMeta, timestamp: &str| NoteView {
                content: content.to_string(),
                context: meta.context.clone(),
                keywords: meta.keywords.clone(),
                tags: meta.tags.clone(),
                timestamp: timestamp.to_string(),
            };
            let views = neighbours
                .iter()
                .map(|(_, m, r)| view(&r.text, m, r.attribute(TIMESTAMP).unwrap_or_default()))
                .collect();
            let evolution = memory
                .run(
                    &EvolveNote::new(view(content, &meta, timestamp), views),
                    lang,
                )
                .await?;
            operations += 1;
            if evolution.should_evolve {
                if let Some(strengthen) = evolution.strengthen {
                    for index in strengthen.connections {
                        if let Some((note, _, _)) = neighbours.get(index) {
                            meta.links.push(note.clone());
                        }
                    }
                    meta.tags = strengthen.tags;
                    meta.evolution_history.push("strengthen".into());
                }
                for ((note, old, _), update) in neighbours
                    .iter()
                    .zip(evolution.update_neighbours.unwrap_or_default())
                {
                    let mut updated = old.clone();
                    updated.context = update.context;
                    updated.tags = update.tags;
                    updated.evolution_history.push(format!("updated by {id}"));
                    batch.put_state(format!("note/{note}"), &updated)?;
                }
            }
        }
        batch.put_state(format!("note/{id}"), &meta)?;
        let done: u64 = self
            .context
            .engine
            .get_state(&self.context.namespace, OPERATIONS)?
            .unwrap_or(0);
        batch.put_state(OPERATIONS, &(done + operations))?;
        Ok(())
    }

    /// Upstream's rendering of a retrieved note.
    fn render(&self, record: &Record, meta: &NoteMeta) -> String {
        let python_list = |items: &[String]| repr_str_list(items.iter().map(String::as_str));
        format!(
            "talk start time:{}\nmemory content: {}memory context: {}memory keywords: {}memory tags: {}\n",
            record.attribute(TIMESTAMP).unwrap_or_default(),
            record.text,
            meta.context,
            python_list(&meta.keywords),
            python_list(&meta.tags)
        )
    }
}

#[async_trait]
impl MemorySystem for AMem {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let notes = dialog
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let role = m.role.as_str();
                (
                    format!("Speaker {role} says: {}", m.content),
                    format!("{}_{i}", dialog.test_idx),
                    Vec::new(),
                )
            })
            .collect();
        self.add_notes(notes, dialog.lang, dialog.metadata).await?;
        Ok(())
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        _format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        let notes: Vec<(String, String, Vec<String>)> = corpus
            .turn_documents()
            .into_iter()
            .zip(corpus.sessions.iter().flat_map(|s| &s.turns))
            .map(|((timestamp, _), turn)| (turn_line(turn), timestamp, vec![turn.dia_id.clone()]))
            .collect();
        let turns: Vec<Vec<String>> = notes.iter().map(|(_, _, t)| t.clone()).collect();
        let ids = self.add_notes(notes, self.context.lang, None).await?;
        Ok(CorpusMemory {
            namespace: self.context.namespace.clone(),
            units: ids
                .into_iter()
                .zip(turns)
                .map(|(doc_id, turns)| CorpusUnit { doc_id, turns })
                .collect(),
        })
    }

    async fn retrieve(
        &self,
        query: &str,
        lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        if self.context.engine.count(&self.context.namespace)? == 0 {
            return Ok(Vec::new());
        }
        let keywords = self
            .context
            .llm
            .memory
            .run(&QueryKeywords::new(query, QUERY_KEYWORDS), lang)
            .await?;
        // Upstream embeds the keyword text as the model wrote it, even an empty one.
        let vector = embed_text(&self.embedder, keywords).await?;
        let hits = self.context.engine.search_vector(
            &self.context.namespace,
            self.embedder.model_id(),
            &vector,
            k,
        )?;
        let mut seen = BTreeSet::new();
        let mut retrieved = Vec::new();
        for hit in hits {
            let note = hit
                .record
                .attribute(NOTE_ID)
                .unwrap_or_default()
                .to_string();
            let meta = self.meta(&note)?;
            let mut text = self.render(&hit.record, &meta);
            seen.insert(note.clone());
            // Full mode: linked notes follow the note that links them.
            for link in &meta.links {
                if seen.insert(link.clone()) {
                    if let Some(linked) = self.find(link)? {
                        text.push_str(&self.render(&linked, &self.meta(link)?));
                    }
                }
            }
            retrieved.push(Retrieved {
                doc_id: note,
                score: hit.score,
                turns: hit
                    .record
                    .attribute(TURNS)
                    .map(|t| t.split(',').map(str::to_string).collect())
                    .unwrap_or_default(),
                text,
            });
        }
        Ok(retrieved)
    }

    fn upstream_answer(&self) -> Option<AnswerOf> {
        Some(AnswerOf::AMem)
    }

    /// Upstream concatenates the rendered notes, each ending with its own newline.
    fn memory_context(&self, retrieved: &[Retrieved]) -> String {
        retrieved.iter().map(|r| r.text.as_str()).collect()
    }

    fn delete_corpus(&self, corpus: &CorpusMemory) -> Result<(), MemoryError> {
        delete_units(&self.context.engine, &corpus.namespace, &corpus.doc_ids())
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        let mut stats = stats(&self.context.engine, &self.context.namespace)?;
        if self
            .context
            .engine
            .namespace(&self.context.namespace)
            .is_ok()
        {
            stats.llm_operations = self
                .context
                .engine
                .get_state(&self.context.namespace, OPERATIONS)?
                .unwrap_or(0);
        }
        Ok(stats)
    }
}

impl AMem {
    /// The record of a note by its id.
    fn find(&self, note: &str) -> Result<Option<Record>, MemoryError> {
        for record in self.context.engine.records(&self.context.namespace)? {
            let record = record?;
            if record.attribute(NOTE_ID) == Some(note) {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }
}
