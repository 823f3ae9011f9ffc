//! rig filters, evaluated by the engine.

use mb_rig::rig_core::vector_store::request::SearchFilter;
use mb_rig::rig_core::vector_store::{VectorSearchRequest, VectorStoreError, VectorStoreIndex};
use mb_rig::{to_engine_filter, RigFilter};
use serde_json::json;

use crate::common::{engine, filled_index, hashing, memories, Memory};

fn filtered(query: &str, samples: u64, filter: RigFilter) -> VectorSearchRequest<RigFilter> {
    VectorSearchRequest::builder()
        .query(query)
        .samples(samples)
        .filter(filter)
        .build()
}

/// Equality filters keep exactly the matching documents, ranked as the engine's filtered
/// search ranks them.
#[tokio::test]
async fn equality_filters_keep_the_matching_documents_in_the_engines_order() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    let query = "How is the marathon training going?";
    let cases = [
        (RigFilter::eq("speaker", json!("Jon")), 5),
        (
            RigFilter::eq("speaker", json!("Maya")).and(RigFilter::eq("session", json!(2))),
            2,
        ),
    ];
    for (filter, matching) in cases {
        let engine_filter = to_engine_filter(&filter).unwrap().unwrap();
        let expected = memories()
            .into_iter()
            .filter(|m| {
                engine_filter.conditions().all(|(key, value)| match key {
                    "speaker" => m.speaker == value,
                    "session" => m.session.to_string() == value,
                    _ => false,
                })
            })
            .count();
        assert_eq!(expected, matching, "fixture check");

        let results = index
            .top_n::<Memory>(filtered(query, 20, filter.clone()))
            .await
            .expect("filtered top_n");
        assert_eq!(results.len(), matching, "{filter:?}");
        for result in &results {
            let document = serde_json::to_value(&result.2).unwrap();
            assert!(filter.satisfies(&document), "{document} fails {filter:?}");
        }

        let vector = mb_embed::Embedder::embed_one(index.embedder(), query).unwrap();
        let engine_hits = engine
            .search_vector_filtered(
                index.namespace(),
                index.space(),
                &vector,
                20,
                &engine_filter,
            )
            .unwrap();
        let engine_ids: Vec<&str> = engine_hits
            .iter()
            .map(|h| h.record.attribute(mb_rig::DOCUMENT_ID).unwrap())
            .collect();
        let ids: Vec<&str> = results.iter().map(|(_, id, _)| id.as_str()).collect();
        assert_eq!(ids, engine_ids);
    }
}

/// A filter narrows before the top n is taken: asking for one Jon memory about the dog gets a
/// Jon memory, although Maya's dog memory ranks first unfiltered.
#[tokio::test]
async fn filters_apply_before_the_top_n_is_taken() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    let query = "Which dog was adopted?";
    let unfiltered = index
        .top_n::<Memory>(
            VectorSearchRequest::builder()
                .query(query)
                .samples(1)
                .build(),
        )
        .await
        .unwrap();
    assert_eq!(unfiltered[0].2.speaker, "Maya");
    let jon = index
        .top_n::<Memory>(filtered(query, 1, RigFilter::eq("speaker", json!("Jon"))))
        .await
        .unwrap();
    assert_eq!(jon.len(), 1);
    assert_eq!(jon[0].2.speaker, "Jon");
}

#[tokio::test]
async fn contradictory_and_unmatched_filters_find_nothing() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    for filter in [
        RigFilter::eq("speaker", json!("Maya")).and(RigFilter::eq("speaker", json!("Jon"))),
        RigFilter::eq("speaker", json!("Nobody")),
        RigFilter::eq("no such field", json!("Maya")),
    ] {
        let results = index.top_n_ids(filtered("dog", 5, filter)).await.unwrap();
        assert!(results.is_empty(), "{results:?}");
    }
}

/// Filters the engine cannot evaluate are errors that say why, never silently ignored.
#[tokio::test]
async fn unsupported_filters_are_filter_errors() {
    let (_dir, engine) = engine();
    let (index, _) = filled_index(&engine, hashing());
    for (filter, says) in [
        (RigFilter::gt("session", json!(1)), "gt"),
        (RigFilter::lt("session", json!(2)), "lt"),
        (
            RigFilter::eq("speaker", json!("Maya")).or(RigFilter::eq("speaker", json!("Jon"))),
            "or",
        ),
        (RigFilter::eq("session", json!(1.5)), "eq"),
    ] {
        let error = index
            .top_n::<Memory>(filtered("dog", 5, filter))
            .await
            .expect_err("unsupported filter");
        assert!(
            matches!(error, VectorStoreError::FilterError(_)),
            "{error:?}"
        );
        assert!(error.to_string().contains(says), "{error}");
    }
}
