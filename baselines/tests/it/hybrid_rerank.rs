//! The hybrid memory's cross-encoder stage (`[hybrid] rerank_candidates`): the first
//! candidates come back in the reranker's order, the rest as fused, and the setting is
//! bounded.

use mb_baselines::hybrid::{HybridFile, HybridSettings, UnitSize};
use mb_core::Lang;
use mb_datasets::dataset::CorpusFormat;
use mb_embed::{Assets, OnnxReranker};

use crate::common::{context, engine, offline, system};
use crate::hybrid::{conversation, session, with_hybrid};

const MODEL: &str = "ms-marco-minilm-l12-int8";
const QUESTION: &str = "Where did Maya go hiking last summer?";

#[tokio::test]
async fn the_first_candidates_come_back_in_the_rerankers_order() {
    let dir = match Assets::model_dir(MODEL) {
        Ok(dir) => dir,
        Err(e) => {
            return mb_core::test_data::skip(&format!("the reranker model is not installed: {e}"))
        }
    };
    let store = tempfile::tempdir().unwrap();
    let corpus = conversation(vec![
        session(
            "1 May, 2023",
            1,
            &[
                ("Maya", "Hiking is fun, I should go hiking more often."),
                ("Jon", "Summer is the best time for hiking, Maya."),
                (
                    "Maya",
                    "Last summer I hiked the Dolomites in Italy for a week.",
                ),
                ("Jon", "Did you go anywhere last weekend?"),
                ("Maya", "I went to a summer concert in the park."),
                ("Jon", "Maya, where do you keep your hiking boots?"),
            ],
        ),
        session(
            "9 May, 2023",
            2,
            &[
                ("Maya", "My sister went hiking in Norway."),
                ("Jon", "Last summer was so hot."),
            ],
        ),
    ]);
    let mut runs = Vec::new();
    for rerank in [0, 4] {
        let namespace = format!("r{rerank}");
        let base = context(
            engine(&store.path().join(&namespace)),
            &namespace,
            offline(),
        );
        let memory = system(
            "hybrid",
            with_hybrid(base, |h| {
                h.unit = UnitSize::Turn;
                h.rerank_candidates = rerank;
            }),
        );
        memory
            .memorize_corpus(&corpus, CorpusFormat::Locomo)
            .await
            .unwrap();
        let texts: Vec<String> = memory
            .retrieve(QUESTION, Lang::En, 6)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.text)
            .collect();
        runs.push(texts);
    }
    let (fused, reranked) = (&runs[0], &runs[1]);
    // The reranker's own order of the fused first four.
    let reranker = OnnxReranker::shared(&dir).unwrap();
    let head: Vec<&str> = fused[..4].iter().map(|t| transcript(t)).collect();
    let scores = reranker.score(QUESTION, &head).unwrap();
    let mut expected: Vec<usize> = (0..4).collect();
    expected.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let expected: Vec<&String> = expected.iter().map(|&i| &fused[i]).collect();
    assert_eq!(reranked[..4].iter().collect::<Vec<_>>(), expected);
    assert_eq!(reranked[4..], fused[4..], "the tail stays as fused");
    assert!(
        reranked[0].contains("Dolomites"),
        "the answer leads: {reranked:?}"
    );
}

/// A retrieved value without its date.
fn transcript(value: &str) -> &str {
    match value.strip_prefix('[').and_then(|v| v.split_once("] ")) {
        Some((_, transcript)) => transcript,
        None => value,
    }
}

#[test]
fn rerank_settings_are_bounded() {
    let mut settings = HybridSettings::default();
    settings.rerank_candidates = 5_000;
    let error = HybridFile::new(settings).hybrid.check().unwrap_err();
    assert!(error.contains("rerank_candidates"), "{error}");
    assert!(HybridSettings::default().check().is_ok());
}
