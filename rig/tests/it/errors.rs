//! Bad input gives typed errors carrying the engine's or embedder's message, never a panic.

use std::sync::Arc;

use mb_embed::{EmbedError, Embedder};
use mb_engine::Space;
use mb_rig::rig_core::embeddings::Embedding;
use mb_rig::rig_core::vector_store::{
    InsertDocuments, VectorSearchRequest, VectorStoreError, VectorStoreIndex,
};
use mb_rig::{EngineIndex, Error, RigFilter};

use crate::common::{engine, filled_index, hashing, Memory, NAMESPACE};

fn request(query: &str) -> VectorSearchRequest<RigFilter> {
    VectorSearchRequest::builder()
        .query(query)
        .samples(3)
        .build()
}

/// Embeddings of another dimension than the index's space are refused by the engine, and the
/// batch they came in is not stored at all.
#[tokio::test]
async fn embeddings_of_the_wrong_dimension_are_refused_atomically() {
    let (_dir, engine) = engine();
    let (index, ids) = filled_index(&engine, hashing());
    let good = Embedding {
        document: "fine".into(),
        vec: vec![1.0; index.embedder().dim()],
    };
    let bad = Embedding {
        document: "three numbers".into(),
        vec: vec![0.1, 0.2, 0.3],
    };
    let error = index
        .insert_documents(vec![
            ("a good one".to_string(), vec![good]),
            ("a bad one".to_string(), vec![bad]),
        ])
        .await
        .expect_err("wrong dimension");
    assert!(
        matches!(error, VectorStoreError::DatastoreError(_)),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("dimension") && message.contains('3'),
        "{message}"
    );
    assert_eq!(engine.count(NAMESPACE).unwrap(), ids.len() as u64);
}

#[tokio::test]
async fn non_finite_embeddings_are_refused() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    let mut vec = vec![0.5; index.embedder().dim()];
    vec[7] = f64::NAN;
    let error = index
        .insert_embedded(vec![(
            "nan".to_string(),
            vec![Embedding {
                document: "nan".into(),
                vec,
            }],
        )])
        .expect_err("NaN component");
    assert!(matches!(error, Error::Engine(_)), "{error:?}");
}

#[tokio::test]
async fn an_unknown_namespace_is_an_error() {
    let (_dir, engine) = engine();
    let error = EngineIndex::new(engine.clone(), "nobody", hashing()).expect_err("no namespace");
    assert!(
        matches!(error, Error::Engine(mb_engine::Error::UnknownNamespace(_))),
        "{error:?}"
    );

    let (index, _) = filled_index(&engine, hashing());
    engine.drop_namespace(NAMESPACE).unwrap();
    let error = index
        .top_n::<Memory>(request("dog"))
        .await
        .expect_err("dropped");
    assert!(error.to_string().contains("unknown namespace"), "{error}");
    let error = index.insert(["a memory"]).expect_err("dropped");
    assert!(error.to_string().contains("unknown namespace"), "{error}");
}

/// An embedder whose dimension contradicts the space of the same name already in the engine.
#[tokio::test]
async fn an_embedder_that_contradicts_its_space_is_refused() {
    let (_dir, engine) = engine();
    let embedder = hashing();
    engine
        .create_space(Space::new(embedder.model_id(), 8))
        .unwrap();
    let error = EngineIndex::create(engine, NAMESPACE, embedder).expect_err("dimension clash");
    assert!(error.to_string().contains("dimension"), "{error}");
}

#[tokio::test]
async fn documents_without_text_or_embeddings_are_refused() {
    let (_dir, engine) = engine();
    let (index, ids) = filled_index(&engine, hashing());
    let error = index
        .insert_embedded(vec![("no vectors".to_string(), Vec::new())])
        .expect_err("no embeddings");
    assert!(
        matches!(error, Error::NothingToEmbed { index: 0 }),
        "{error:?}"
    );
    let error = index
        .insert(vec![vec!["has text".to_string()], Vec::<String>::new()])
        .expect_err("second document has no text");
    assert!(
        matches!(error, Error::NothingToEmbed { index: 1 }),
        "{error:?}"
    );
    assert_eq!(engine.count(NAMESPACE).unwrap(), ids.len() as u64);
}

/// Reading documents back as a type they are not is a JSON error, not a panic.
#[tokio::test]
async fn reading_documents_as_the_wrong_type_is_a_json_error() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    let error = index
        .top_n::<u32>(request("dog"))
        .await
        .expect_err("not numbers");
    assert!(matches!(error, VectorStoreError::JsonError(_)), "{error:?}");
}

/// An embedder that fails: its message reaches the caller as rig's embedding error.
#[derive(Debug)]
struct Broken;

impl Embedder for Broken {
    fn model_id(&self) -> &str {
        "broken"
    }

    fn dim(&self) -> usize {
        4
    }

    fn embed(&self, _texts: &[&str]) -> mb_embed::Result<Vec<Vec<f32>>> {
        Err(EmbedError::Inference("the model fell over".into()))
    }
}

#[tokio::test]
async fn embedder_failures_are_embedding_errors() {
    let (_dir, engine) = engine();
    let index = EngineIndex::create(engine, NAMESPACE, Arc::new(Broken)).unwrap();
    let error = index
        .top_n_ids(request("dog"))
        .await
        .expect_err("broken embedder");
    assert!(
        matches!(error, VectorStoreError::EmbeddingError(_)),
        "{error:?}"
    );
    assert!(error.to_string().contains("the model fell over"), "{error}");
    let error = index.insert(["text"]).expect_err("broken embedder");
    assert!(matches!(error, Error::Embed(_)), "{error:?}");
}
