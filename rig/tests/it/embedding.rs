//! rig's own embedding pipeline (`EmbeddingsBuilder`, `InsertDocuments`) over an mb-embed
//! embedder, offline.

use mb_embed::{EmbedError, Embedder};
use mb_rig::rig_core::embeddings::EmbeddingsBuilder;
use mb_rig::rig_core::vector_store::{InsertDocuments, VectorSearchRequest, VectorStoreIndex};
use mb_rig::{embedding_model, EngineIndex};

use crate::common::{engine, engine_ranking, hashing, memories, Memory, NAMESPACE};

/// The adapter gives rig the embedder's own vectors, one per text, tagged with the text.
#[tokio::test]
async fn the_adapter_gives_rig_the_embedders_vectors() {
    let embedder = hashing();
    let model = embedding_model(embedder.clone());
    let texts = [
        "a border collie named Pixel",
        "blue bowls",
        "a half marathon",
    ];
    let built = EmbeddingsBuilder::new(model)
        .documents(texts.map(String::from))
        .unwrap()
        .build()
        .await
        .expect("embeddings");
    let direct = embedder.embed(&texts).unwrap();
    assert_eq!(built.len(), texts.len());
    for ((document, embeddings), (text, vector)) in built.iter().zip(texts.iter().zip(direct)) {
        assert_eq!(document, text);
        assert_eq!(embeddings.len(), 1);
        assert_eq!(embeddings[0].document, *text);
        let expected: Vec<f64> = vector.into_iter().map(f64::from).collect();
        assert_eq!(embeddings[0].vec, expected);
    }
}

/// Documents embedded by rig's builder and stored through `InsertDocuments` rank as the engine
/// ranks them, like documents stored with `insert`.
#[tokio::test]
async fn documents_from_rigs_builder_are_searchable() {
    let (_dir, engine) = engine();
    let index = EngineIndex::create(engine.clone(), NAMESPACE, hashing()).unwrap();
    let embedded = EmbeddingsBuilder::new(embedding_model(hashing()))
        .documents(memories())
        .unwrap()
        .build()
        .await
        .unwrap();
    index
        .insert_documents(embedded)
        .await
        .expect("insert_documents");
    assert_eq!(engine.count(NAMESPACE).unwrap(), memories().len() as u64);

    let query = "bowls cracked in the kiln";
    let expected = engine_ranking(&index, query, 3);
    let results = index
        .top_n::<Memory>(
            VectorSearchRequest::builder()
                .query(query)
                .samples(3)
                .build(),
        )
        .await
        .unwrap();
    let got: Vec<(String, f64)> = results
        .iter()
        .map(|(score, id, _)| (id.clone(), *score))
        .collect();
    let want: Vec<(String, f64)> = expected.iter().map(|(id, s, _)| (id.clone(), *s)).collect();
    assert_eq!(got, want);
    assert!(results[0].2.text.contains("kiln"));
}

#[derive(Debug, Clone)]
struct Broken;

impl Embedder for Broken {
    fn model_id(&self) -> &str {
        "broken"
    }

    fn dim(&self) -> usize {
        4
    }

    fn embed(&self, _texts: &[&str]) -> mb_embed::Result<Vec<Vec<f32>>> {
        Err(EmbedError::Inference("out of memory".into()))
    }
}

/// An embedder's failure is the builder's error, with the embedder's message.
#[tokio::test]
async fn embedder_failures_reach_rigs_builder() {
    let error = EmbeddingsBuilder::new(embedding_model(Broken))
        .documents(["text".to_string()])
        .unwrap()
        .build()
        .await
        .expect_err("broken embedder");
    assert!(error.to_string().contains("out of memory"), "{error}");
}
