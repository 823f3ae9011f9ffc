//! [`EngineIndex`]: an engine namespace as a rig vector store.
//!
//! rig agents retrieve context through [`VectorStoreIndex`] and fill stores through
//! [`InsertDocuments`]; this type implements both over one namespace of an [`Engine`], with an
//! [`Embedder`] that turns rig's query texts into vectors of the namespace's space. Search is
//! the engine's cosine search, so a document ranks exactly where
//! [`Engine::search_vector`] ranks its best record.

use std::collections::HashSet;
use std::sync::Arc;

use mb_embed::Embedder;
use mb_engine::{Batch, Engine, NamespaceOptions, Record, Space};
use rig_core::embeddings::{to_texts, Embedding};
use rig_core::vector_store::{
    InsertDocuments, VectorSearchRequest, VectorStoreError, VectorStoreIndex,
};
use rig_core::Embed;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::document::{document_id, document_json, StoredDocument};
use crate::error::{Error, Result};
use crate::filter::{to_engine_filter, RigFilter};

/// One namespace of an engine, searched by rig through an embedder.
///
/// Cheap to clone when `E` is (the engine is shared). Engine calls and embedding are blocking
/// CPU and disk work, done inside the futures rig awaits; they take milliseconds for the
/// in-process embedders of `mb-embed`.
#[derive(Clone)]
pub struct EngineIndex<E> {
    engine: Arc<Engine>,
    namespace: String,
    space: String,
    embedder: E,
}

impl<E> std::fmt::Debug for EngineIndex<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineIndex")
            .field("engine", &self.engine.path())
            .field("namespace", &self.namespace)
            .field("space", &self.space)
            .finish_non_exhaustive()
    }
}

/// One document found by [`EngineIndex::search`]: its id, its best record's cosine similarity
/// to the query, and that record.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentHit {
    /// The rig document id ([`crate::DOCUMENT_ID`], or the record id for records written
    /// without this crate).
    pub id: String,
    /// Cosine similarity of the document's best record, as the engine computed it.
    pub score: f64,
    /// The best-scoring record of the document.
    pub record: Record,
}

impl<E: Embedder> EngineIndex<E> {
    /// An index over the existing `namespace`, searching the embedder's space (named after its
    /// [`model_id`](Embedder::model_id); declared here if the engine does not have it).
    ///
    /// Fails if the namespace does not exist, or the space exists with another dimension.
    pub fn new(engine: Arc<Engine>, namespace: impl Into<String>, embedder: E) -> Result<Self> {
        let namespace = namespace.into();
        engine.namespace(&namespace)?;
        let space = engine.create_space(Space::new(embedder.model_id(), embedder.dim()))?;
        Ok(EngineIndex {
            engine,
            namespace,
            space: space.name,
            embedder,
        })
    }

    /// [`new`](Self::new), creating the namespace with default options if it does not exist.
    pub fn create(engine: Arc<Engine>, namespace: impl Into<String>, embedder: E) -> Result<Self> {
        let namespace = namespace.into();
        engine.ensure_namespace(&namespace, NamespaceOptions::default())?;
        EngineIndex::new(engine, namespace, embedder)
    }

    /// The engine the index reads and writes.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The namespace holding the documents.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The embedding space documents and queries are compared in.
    pub fn space(&self) -> &str {
        &self.space
    }

    /// The embedder that embeds queries (and documents given to [`insert`](Self::insert)).
    pub fn embedder(&self) -> &E {
        &self.embedder
    }

    /// Embeds each document's texts (as its rig [`Embed`] implementation lists them) with the
    /// index's embedder and stores it; returns the new document ids, in order. All documents are
    /// written in one atomic engine batch.
    pub fn insert<D: Serialize + Embed>(
        &self,
        documents: impl IntoIterator<Item = D>,
    ) -> Result<Vec<String>> {
        let mut texts_per_document = Vec::new();
        for document in documents {
            let texts = to_texts(&document).map_err(|error| Error::Extract(error.to_string()))?;
            texts_per_document.push((document, texts));
        }
        let all_texts: Vec<&str> = texts_per_document
            .iter()
            .flat_map(|(_, texts)| texts.iter().map(String::as_str))
            .collect();
        let vectors = match all_texts.is_empty() {
            true => Vec::new(),
            false => self.embedder.embed(&all_texts)?,
        };
        let mut vectors = vectors.into_iter();
        let mut embedded = Vec::with_capacity(texts_per_document.len());
        for (document, texts) in texts_per_document {
            let mut embeddings = Vec::with_capacity(texts.len());
            for text in texts {
                let vector = vectors.next().ok_or_else(|| {
                    mb_embed::EmbedError::Inference(format!(
                        "{} returned fewer vectors than texts",
                        self.embedder.model_id()
                    ))
                })?;
                embeddings.push(Embedding {
                    document: text,
                    vec: vector.into_iter().map(f64::from).collect(),
                });
            }
            embedded.push((document, embeddings));
        }
        self.insert_embedded(embedded)
    }

    /// Stores documents with embeddings computed elsewhere (rig's `EmbeddingsBuilder`, for
    /// example with [`embedding_model`](crate::embedding_model)); returns the new document ids.
    /// Every embedding must be in the index's space: the engine rejects another dimension.
    pub fn insert_embedded<D: Serialize>(
        &self,
        documents: Vec<(D, Vec<Embedding>)>,
    ) -> Result<Vec<String>> {
        let mut batch = Batch::new();
        let mut ids = Vec::with_capacity(documents.len());
        for (index, (document, embeddings)) in documents.into_iter().enumerate() {
            if embeddings.is_empty() {
                return Err(Error::NothingToEmbed { index });
            }
            let stored = StoredDocument::new(
                uuid::Uuid::new_v4().to_string(),
                &serde_json::to_value(&document)?,
            )?;
            for embedding in embeddings {
                let vector = embedding.vec.iter().map(|x| *x as f32).collect();
                batch.put(stored.record(&embedding.document, &self.space, vector));
            }
            ids.push(stored.id().to_owned());
        }
        if !batch.is_empty() {
            self.engine.write(&self.namespace, batch)?;
        }
        Ok(ids)
    }

    /// The documents rig's `request` asks for: the query embedded, the `samples` most similar
    /// documents passing the filter, best first, none under the threshold. A document stored
    /// with several embeddings counts once, at its best score.
    pub fn search(&self, request: &VectorSearchRequest<RigFilter>) -> Result<Vec<DocumentHit>> {
        let wanted = usize::try_from(request.samples()).unwrap_or(usize::MAX);
        let filter = match request.filter() {
            None => mb_engine::Filter::new(),
            Some(filter) => match to_engine_filter(filter)? {
                Some(filter) => filter,
                None => return Ok(Vec::new()),
            },
        };
        if wanted == 0 {
            return Ok(Vec::new());
        }
        let query = self.embedder.embed_one(request.query())?;
        let mut asked = wanted;
        loop {
            let hits = self.engine.search_vector_filtered(
                &self.namespace,
                &self.space,
                &query,
                asked,
                &filter,
            )?;
            let exhausted = hits.len() < asked;
            let (found, complete) = distinct_documents(hits, wanted, request.threshold());
            if complete || exhausted {
                return Ok(found);
            }
            // Some documents were seen more than once: look further down the ranking.
            asked = asked.saturating_mul(4);
        }
    }
}

/// The first `wanted` distinct documents of a ranking, stopping at the first hit under
/// `threshold`; `true` when no further hit could add one.
fn distinct_documents(
    hits: Vec<mb_engine::Hit>,
    wanted: usize,
    threshold: Option<f64>,
) -> (Vec<DocumentHit>, bool) {
    let mut seen = HashSet::new();
    let mut found = Vec::new();
    for hit in hits {
        let score = f64::from(hit.score);
        if threshold.is_some_and(|threshold| score < threshold) {
            return (found, true);
        }
        let id = document_id(&hit.record);
        if seen.insert(id.clone()) {
            found.push(DocumentHit {
                id,
                score,
                record: hit.record,
            });
            if found.len() == wanted {
                return (found, true);
            }
        }
    }
    (found, false)
}

impl<E: Embedder> VectorStoreIndex for EngineIndex<E> {
    type Filter = RigFilter;

    async fn top_n<T: DeserializeOwned + Send>(
        &self,
        request: VectorSearchRequest<RigFilter>,
    ) -> Result<Vec<(f64, String, T)>, VectorStoreError> {
        self.search(&request)?
            .into_iter()
            .map(|hit| {
                let document: T = serde_json::from_value(document_json(&hit.record)?)?;
                Ok((hit.score, hit.id, document))
            })
            .collect::<Result<Vec<_>>>()
            .map_err(VectorStoreError::from)
    }

    async fn top_n_ids(
        &self,
        request: VectorSearchRequest<RigFilter>,
    ) -> Result<Vec<(f64, String)>, VectorStoreError> {
        Ok(self
            .search(&request)?
            .into_iter()
            .map(|hit| (hit.score, hit.id))
            .collect())
    }
}

impl<E: Embedder> InsertDocuments for EngineIndex<E> {
    async fn insert_documents<D: Serialize + Embed + Send>(
        &self,
        documents: Vec<(D, Vec<Embedding>)>,
    ) -> Result<(), VectorStoreError> {
        self.insert_embedded(documents)?;
        Ok(())
    }
}
