//! Emb-M (`embedder_message`) and Emb-S (`embedder_dialog`): upstream's FAISS baselines as
//! engine records with unit vectors from the configured embedder, searched by cosine
//! similarity (equal in ranking to upstream's L2 search over unit vectors).
//!
//! Units are BM25-M's and BM25-S's. Deleted units leave the index at once (the engine keeps
//! tombstones out of results), which is what upstream's over-fetch-and-skip achieves.

use std::sync::Arc;

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_embed::Embedder;
use mb_upstream::AnswerOf;

use crate::curation::{stamped, Metadata};
use crate::embedding::embed_text;
use crate::error::MemoryError;
use crate::store::{analyzer, delete_units, open_embedding_memory, retrieved, stats, unit_record};
use crate::system::{
    CorpusMemory, MemoryContext, MemoryStats, MemorySystem, Retrieved, TrainingDialog,
};
use crate::units::{corpus_memory, corpus_units, dialog_units, Granularity, Unit};

/// An embedding memory over message or session units.
pub struct DenseMemory {
    context: MemoryContext,
    granularity: Granularity,
    embedder: Arc<dyn Embedder>,
}

impl DenseMemory {
    /// An embedding memory in the context's namespace; the context must carry an embedder.
    pub fn new(context: MemoryContext, granularity: Granularity) -> Result<Self, MemoryError> {
        let name = match granularity {
            Granularity::Message => "embedder_message",
            Granularity::Session => "embedder_dialog",
        };
        let embedder = open_embedding_memory(&context, name, analyzer(&context))?;
        Ok(DenseMemory {
            context,
            granularity,
            embedder,
        })
    }

    fn write(&self, units: &[Unit], metadata: Option<&Metadata>) -> Result<(), MemoryError> {
        let texts: Vec<&str> = units.iter().map(|u| u.index_text.as_str()).collect();
        let vectors = self.embedder.embed(&texts)?;
        let space = self.embedder.model_id();
        let records: Vec<_> = units
            .iter()
            .zip(vectors)
            .map(|(unit, vector)| stamped(unit_record(unit, Some((space, vector))), metadata))
            .collect();
        self.context
            .engine
            .put_many(&self.context.namespace, records)?;
        Ok(())
    }
}

#[async_trait]
impl MemorySystem for DenseMemory {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    fn builds_with_the_memory_model(&self) -> bool {
        false
    }

    fn upstream_answer(&self) -> Option<AnswerOf> {
        Some(match self.granularity {
            Granularity::Message => AnswerOf::Embedder,
            Granularity::Session => AnswerOf::EmbedderDialog,
        })
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let units = dialog_units(dialog, self.granularity)?;
        self.write(&units, dialog.metadata)
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        _format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        let units = corpus_units(corpus, self.granularity);
        self.write(&units, None)?;
        Ok(corpus_memory(&self.context.namespace, units))
    }

    async fn retrieve(
        &self,
        query: &str,
        _lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        let vector = embed_text(&self.embedder, query.to_string()).await?;
        let hits = self.context.engine.search_vector(
            &self.context.namespace,
            self.embedder.model_id(),
            &vector,
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
