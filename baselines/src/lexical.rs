//! BM25-M (`bm25_message`) and BM25-S (`bm25_dialog`): upstream's Whoosh baselines as engine
//! records searched by the engine's per-namespace BM25 (Whoosh's formula, K1 1.2, B 0.75, and
//! its standard analyzer by default).
//!
//! BM25-M stores one unit per dialog message and corpus turn; BM25-S one per dialog, searched
//! by its first user message and returning the whole dialog, and one per corpus session.
//! Questions are read as Whoosh query syntax by default, as upstream's `QueryParser` reads
//! them (`query_syntax = "plain"` in `configs/memory/bm25.toml` ORs their words instead).

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_engine::QuerySyntax;
use mb_upstream::AnswerOf;
use serde::{Deserialize, Serialize};

use crate::curation::{stamped, Metadata};
use crate::error::MemoryError;
use crate::settings::OwnSettings;
use crate::store::{delete_units, ensure_namespace, retrieved, stats, unit_record};
use crate::system::{
    CorpusMemory, MemoryContext, MemoryStats, MemorySystem, Retrieved, TrainingDialog,
};
use crate::units::{corpus_memory, corpus_units, dialog_units, Granularity, Unit};

/// BM25-M/S's keys in their settings file (`configs/memory/bm25.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct LexicalSettings {
    /// How a question is read. `whoosh` (upstream's default `QueryParser` with an OR group: a
    /// word ending in `?` is a wildcard, quotes are phrases, `AND`/`OR`/`NOT` operators);
    /// `plain` ORs the question's words.
    pub query_syntax: QuerySyntax,
}

impl Default for LexicalSettings {
    fn default() -> Self {
        LexicalSettings {
            query_syntax: QuerySyntax::Whoosh,
        }
    }
}

impl LexicalSettings {
    /// Settings reading questions as `query_syntax` says.
    pub fn new(query_syntax: QuerySyntax) -> LexicalSettings {
        LexicalSettings { query_syntax }
    }
}

impl OwnSettings for LexicalSettings {}

/// A BM25 memory over message or session units.
pub struct LexicalMemory {
    context: MemoryContext,
    granularity: Granularity,
    query_syntax: QuerySyntax,
}

impl LexicalMemory {
    /// A BM25 memory in the context's namespace.
    pub fn new(context: MemoryContext, granularity: Granularity) -> Result<Self, MemoryError> {
        ensure_namespace(&context, &context.namespace)?;
        let query_syntax = context.settings.own::<LexicalSettings>()?.query_syntax;
        Ok(LexicalMemory {
            context,
            granularity,
            query_syntax,
        })
    }

    fn write(
        &self,
        namespace: &str,
        units: &[Unit],
        metadata: Option<&Metadata>,
    ) -> Result<(), MemoryError> {
        let records: Vec<_> = units
            .iter()
            .map(|u| stamped(unit_record(u, None), metadata))
            .collect();
        self.context.engine.put_many(namespace, records)?;
        Ok(())
    }
}

#[async_trait]
impl MemorySystem for LexicalMemory {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    fn builds_with_the_memory_model(&self) -> bool {
        false
    }

    fn upstream_answer(&self) -> Option<AnswerOf> {
        Some(match self.granularity {
            Granularity::Message => AnswerOf::Bm25,
            Granularity::Session => AnswerOf::Bm25Dialog,
        })
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let units = dialog_units(dialog, self.granularity)?;
        self.write(&self.context.namespace, &units, dialog.metadata)
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        _format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        let units = corpus_units(corpus, self.granularity);
        self.write(&self.context.namespace, &units, None)?;
        Ok(corpus_memory(&self.context.namespace, units))
    }

    async fn retrieve(
        &self,
        query: &str,
        _lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        let hits = self.context.engine.search_query(
            &self.context.namespace,
            query,
            self.query_syntax,
            k,
        )?;
        Ok(hits.into_iter().map(retrieved).collect())
    }

    fn delete_corpus(&self, corpus: &CorpusMemory) -> Result<(), MemoryError> {
        delete_units(&self.context.engine, &corpus.namespace, &corpus.doc_ids())
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        stats(&self.context.engine, &self.context.namespace)
    }
}
