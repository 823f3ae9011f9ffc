//! RAPTOR (Sarthi et al. 2024), upstream's ninth registered system (`src/agent/raptor.py`, the
//! vendored `baselines/raptor`): a tree of recursively clustered summaries over everything
//! memorized, searched collapsed (every node at once).
//!
//! Each dialog message is one document, `Conversation <test_idx>_<i>:\nSpeaker <role> says:
//! <content>` as upstream writes it; a corpus adds one document per turn (upstream's RAPTOR
//! takes none: ours does, so that it runs on every set). The tree is built from all documents
//! joined by blank lines ([`tree`]) when a question first needs it after the documents changed,
//! and kept in the store: its nodes are records with their embeddings, and a state key says
//! the tree is current, so a cached memory is reused with its tree. A question retrieves the 10
//! nearest nodes by cosine similarity and keeps them in order until the next would take the
//! context over 3 500 tokens (upstream's `retrieve` defaults); their texts fill upstream's
//! answer template, each on one line followed by a blank line. A node covers the turns of the
//! documents under it, so a summary counts for every turn it summarizes in retrieval metrics.
//!
//! Upstream never runs RAPTOR (its solver is commented out), so the system is registered beyond
//! upstream: `all` leaves it out. Its UMAP layouts are seeded where upstream's are not.

pub mod chunk;
pub mod ops;
mod settings;
pub mod tree;

pub use settings::RaptorSettings;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_embed::Embedder;
use mb_engine::{Filter, NewRecord};
use mb_upstream::AnswerOf;
use tokio::sync::Mutex;

use crate::curation::{stamped, Metadata};
use crate::embedding::embed_text;
use crate::error::MemoryError;
use crate::store::{analyzer, delete_units, open_embedding_memory, record_turns, stats};
use crate::system::{
    CorpusMemory, MemoryContext, MemoryStats, MemorySystem, Retrieved, TrainingDialog,
};
use crate::tokens::TokenCounter;
use crate::units::{corpus_memory, corpus_units, Granularity};
use tree::{joined_text, Builder};

/// Attribute telling documents from tree nodes.
const KIND: &str = "raptor";
const DOCUMENT: &str = "document";
const NODE: &str = "node";
/// Attribute of a node: its layer.
const LAYER: &str = "layer";
/// State key present while the stored tree holds every document.
const TREE_CURRENT: &str = "raptor_tree_current";

/// The RAPTOR memory.
pub struct Raptor {
    context: MemoryContext,
    embedder: Arc<dyn Embedder>,
    tokens: TokenCounter,
    settings: RaptorSettings,
    /// Whether this process found the stored tree current (cleared by every change).
    current: AtomicBool,
    /// Held while the documents change or the tree is checked and rebuilt.
    writing: Mutex<()>,
}

impl Raptor {
    /// RAPTOR's memory in the context's namespace.
    pub fn new(context: MemoryContext) -> Result<Raptor, MemoryError> {
        let embedder = open_embedding_memory(&context, "raptor", analyzer(&context))?;
        let settings = context.settings.own::<RaptorSettings>()?;
        Ok(Raptor {
            context,
            embedder,
            tokens: TokenCounter::new()?,
            settings,
            current: AtomicBool::new(false),
            writing: Mutex::new(()),
        })
    }

    /// Stores documents (`(doc_id, text, turns)`) and marks the tree out of date.
    async fn add_documents(
        &self,
        documents: Vec<(String, String, Vec<String>)>,
        metadata: Option<&Metadata>,
    ) -> Result<(), MemoryError> {
        let records = documents.into_iter().map(|(doc_id, text, turns)| {
            let mut record = stamped(NewRecord::new(text), metadata)
                .with_attribute(KIND, DOCUMENT)
                .with_attribute(crate::store::DOC_ID, doc_id);
            if !turns.is_empty() {
                record = record.with_attribute(crate::store::TURNS, turns.join(","));
            }
            record
        });
        let _writing = self.writing.lock().await;
        self.current.store(false, Ordering::SeqCst);
        self.context
            .engine
            .delete_state(&self.context.namespace, TREE_CURRENT)?;
        self.context
            .engine
            .put_many(&self.context.namespace, records.collect::<Vec<_>>())?;
        Ok(())
    }

    /// Rebuilds the stored tree unless it holds every document.
    async fn ensure_tree(&self) -> Result<(), MemoryError> {
        if self.current.load(Ordering::SeqCst) {
            return Ok(());
        }
        let _writing = self.writing.lock().await;
        if self.current.load(Ordering::SeqCst) {
            return Ok(());
        }
        let engine = &self.context.engine;
        let namespace = &self.context.namespace;
        if engine.get_state::<bool>(namespace, TREE_CURRENT)?.is_none() {
            engine.delete_where(namespace, &Filter::new().attribute(KIND, NODE))?;
            let documents: Vec<mb_engine::Record> = engine
                .records(namespace)?
                .filter(|r| {
                    r.as_ref()
                        .map_or(true, |r| r.attribute(KIND) == Some(DOCUMENT))
                })
                .collect::<Result<_, _>>()?;
            let texts: Vec<String> = documents.iter().map(|d| d.text.clone()).collect();
            let builder = Builder {
                embedder: &self.embedder,
                llm: &self.context.llm,
                tokens: &self.tokens,
                grouping: self.settings.grouping(),
                lang: self.context.lang,
            };
            let nodes = builder.build(&texts).await?;
            let space = self.embedder.model_id();
            let records = nodes.into_iter().enumerate().map(|(index, node)| {
                let mut turns: Vec<String> = node
                    .documents
                    .iter()
                    .flat_map(|&d| record_turns(&documents[d]))
                    .collect();
                turns.sort_unstable();
                turns.dedup();
                let mut record = NewRecord::new(node.text)
                    .with_attribute(KIND, NODE)
                    .with_attribute(LAYER, node.layer.to_string())
                    .with_attribute(crate::store::DOC_ID, format!("raptor_node_{index}"))
                    .with_vector(space, node.embedding);
                if !turns.is_empty() {
                    record = record.with_attribute(crate::store::TURNS, turns.join(","));
                }
                record
            });
            engine.put_many(namespace, records.collect::<Vec<_>>())?;
            engine.put_state(namespace, TREE_CURRENT, &true)?;
        }
        self.current.store(true, Ordering::SeqCst);
        Ok(())
    }
}

#[async_trait]
impl MemorySystem for Raptor {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    fn upstream_answer(&self) -> Option<AnswerOf> {
        Some(AnswerOf::Raptor)
    }

    /// Upstream's RAPTOR configuration has no `retrieve_k`: one attempt.
    fn retries_with_fewer_memories(&self) -> bool {
        false
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let documents = dialog
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let id = format!("{}_{i}", dialog.test_idx);
                let text = format!(
                    "Conversation {id}:\nSpeaker {} says: {}",
                    m.role.as_str(),
                    m.content
                );
                (format!("conv_{id}"), text, Vec::new())
            })
            .collect();
        self.add_documents(documents, dialog.metadata).await
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        _format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        let units = corpus_units(corpus, Granularity::Message);
        let documents = units
            .iter()
            .map(|u| (u.doc_id.clone(), u.content.clone(), u.turns.clone()))
            .collect();
        self.add_documents(documents, None).await?;
        Ok(corpus_memory(&self.context.namespace, units))
    }

    async fn retrieve(
        &self,
        query: &str,
        _lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        self.ensure_tree().await?;
        let vector = embed_text(&self.embedder, query.replace('\n', " ")).await?;
        let hits = self.context.engine.search_vector_filtered(
            &self.context.namespace,
            self.embedder.model_id(),
            &vector,
            k,
            &Filter::new().attribute(KIND, NODE),
        )?;
        let mut used = 0;
        let mut retrieved = Vec::new();
        for hit in hits {
            used += self.tokens.count(&hit.record.text);
            if used > self.settings.context_tokens {
                break;
            }
            retrieved.push(crate::store::retrieved(hit));
        }
        Ok(retrieved)
    }

    /// The nodes' texts each on one line and a blank line after (upstream's `get_text`).
    fn memory_context(&self, retrieved: &[Retrieved]) -> String {
        joined_text(retrieved.iter().map(|r| r.text.as_str()))
    }

    fn delete_corpus(&self, corpus: &CorpusMemory) -> Result<(), MemoryError> {
        self.current.store(false, Ordering::SeqCst);
        self.context
            .engine
            .delete_state(&self.context.namespace, TREE_CURRENT)?;
        delete_units(&self.context.engine, &corpus.namespace, &corpus.doc_ids())
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        stats(&self.context.engine, &self.context.namespace)
    }
}
