//! `top_n` and `top_n_ids` against the engine's own vector search.

use mb_engine::NewRecord;
use mb_rig::rig_core::embeddings::Embedding;
use mb_rig::rig_core::vector_store::{VectorSearchRequest, VectorStoreIndex};
use mb_rig::RigFilter;

use crate::common::{engine, engine_ranking, filled_index, hashing, memories, Memory, NAMESPACE};

fn request(query: &str, samples: u64) -> VectorSearchRequest<RigFilter> {
    VectorSearchRequest::builder()
        .query(query)
        .samples(samples)
        .build()
}

const QUERIES: &[&str] = &[
    "Which dog was adopted?",
    "marathon training knee",
    "bowls for the wedding present",
    "new job as a data engineer",
];

#[tokio::test]
async fn top_n_returns_the_engines_ranking_with_its_scores_and_the_stored_documents() {
    let (_dir, engine) = engine();
    let (index, ids) = filled_index(&engine, hashing());
    let originals = memories();
    for query in QUERIES {
        let expected = engine_ranking(&index, query, 4);
        let results = index
            .top_n::<Memory>(request(query, 4))
            .await
            .expect("top_n");
        assert_eq!(results.len(), 4, "{query}");
        for ((got_score, got_id, document), (id, score, text)) in results.iter().zip(&expected) {
            assert_eq!(got_id, id, "{query}");
            assert_eq!(got_score, score, "{query}");
            assert_eq!(&document.text, text);
            let position = ids.iter().position(|i| i == id).expect("a stored id");
            assert_eq!(*document, originals[position], "document round trip");
        }
        let scores: Vec<f64> = results.iter().map(|(score, _, _)| *score).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    }
}

#[tokio::test]
async fn top_n_ids_agree_with_top_n() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    for query in QUERIES {
        let documents = index
            .top_n::<serde_json::Value>(request(query, 3))
            .await
            .expect("top_n");
        let ids = index.top_n_ids(request(query, 3)).await.expect("top_n_ids");
        let from_documents: Vec<(String, f64)> = documents
            .into_iter()
            .map(|(score, id, _)| (id, score))
            .collect();
        let from_ids: Vec<(String, f64)> = ids.into_iter().map(|(score, id)| (id, score)).collect();
        assert_eq!(from_documents, from_ids, "{query}");
    }
}

#[tokio::test]
async fn the_threshold_drops_documents_scored_below_it() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    let query = "marathon training knee";
    let ranking = engine_ranking(&index, query, 3);
    assert!(
        ranking[1].1 > ranking[2].1,
        "a gap to put the threshold in: {ranking:?}"
    );
    let threshold = (ranking[1].1 + ranking[2].1) / 2.0;
    let thresholded = VectorSearchRequest::builder()
        .query(query)
        .samples(5)
        .threshold(threshold)
        .build();
    let results = index.top_n_ids(thresholded).await.expect("top_n_ids");
    let ids: Vec<&str> = results.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(ids, vec![ranking[0].0.as_str(), ranking[1].0.as_str()]);
    assert!(results.iter().all(|(score, _)| *score >= threshold));

    let above_all = VectorSearchRequest::builder()
        .query(query)
        .samples(5)
        .threshold(ranking[0].1 + 1e-6)
        .build();
    assert!(index
        .top_n_ids(above_all)
        .await
        .expect("top_n_ids")
        .is_empty());
}

#[tokio::test]
async fn sample_counts_are_honoured() {
    let (_dir, engine) = engine();
    let (index, ids) = filled_index(&engine, hashing());
    assert!(index.top_n_ids(request("dog", 0)).await.unwrap().is_empty());
    let all = index.top_n_ids(request("dog", 1000)).await.unwrap();
    assert_eq!(all.len(), ids.len());
}

/// A document embedded from several texts has one record per text; it is found once, at the
/// score of its best record, and does not crowd other documents out of the result.
#[tokio::test]
async fn a_document_with_several_embeddings_is_returned_once_at_its_best_score() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    let texts = [
        "Pixel the border collie chewed every shoe",
        "Pixel the collie ate the running socks",
    ];
    let vectors = index.embedder_vectors(&texts);
    let embeddings: Vec<Embedding> = texts
        .iter()
        .zip(vectors)
        .map(|(text, vec)| Embedding {
            document: text.to_string(),
            vec,
        })
        .collect();
    let ids = index
        .insert_embedded(vec![("Pixel's misdeeds".to_string(), embeddings)])
        .expect("insert");
    let query = "Pixel the collie";
    let records = engine_ranking(&index, query, 20);
    let best = records
        .iter()
        .filter(|(id, _, _)| *id == ids[0])
        .map(|(_, score, _)| *score)
        .fold(f64::MIN, f64::max);
    assert_eq!(records.iter().filter(|(id, _, _)| *id == ids[0]).count(), 2);
    assert!(
        records[..2].iter().all(|(id, _, _)| *id == ids[0]),
        "both records lead the engine's ranking, so a top 3 must look past them: {records:?}"
    );

    // The namespace mixes documents of two shapes: read them all as JSON.
    let results = index
        .top_n::<serde_json::Value>(request(query, 3))
        .await
        .unwrap();
    assert_eq!(results.len(), 3);
    let mine: Vec<_> = results.iter().filter(|(_, id, _)| *id == ids[0]).collect();
    assert_eq!(mine.len(), 1, "{results:?}");
    assert_eq!(mine[0].0, best);
    assert_eq!(mine[0].2, serde_json::json!("Pixel's misdeeds"));
    let mut distinct: Vec<&str> = results.iter().map(|(_, id, _)| id.as_str()).collect();
    distinct.dedup();
    assert_eq!(distinct.len(), 3);
}

/// Records stored through the engine directly, without this crate, are served too: their
/// content as a JSON string, their record id as document id.
#[tokio::test]
async fn records_written_without_rig_are_served_as_their_text() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    let text = "Jon's sister moved to Porto in spring";
    let vector = index.embedder_vectors(&[text]).remove(0);
    let id = engine
        .put(
            NAMESPACE,
            NewRecord::new(text)
                .with_vector(index.space(), vector.iter().map(|x| *x as f32).collect()),
        )
        .expect("put");
    let results = index
        .top_n::<serde_json::Value>(request("sister moved to Porto", 1))
        .await
        .unwrap();
    assert_eq!(results[0].1, id.to_string());
    assert_eq!(results[0].2, serde_json::json!(text));
}

/// Vectors of the index's embedder, as rig embeddings carry them.
trait EmbedderVectors {
    fn embedder_vectors(&self, texts: &[&str]) -> Vec<Vec<f64>>;
}

impl<E: mb_embed::Embedder> EmbedderVectors for mb_rig::EngineIndex<E> {
    fn embedder_vectors(&self, texts: &[&str]) -> Vec<Vec<f64>> {
        self.embedder()
            .embed(texts)
            .expect("embed")
            .into_iter()
            .map(|v| v.into_iter().map(f64::from).collect())
            .collect()
    }
}
