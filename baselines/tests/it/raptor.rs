//! RAPTOR on the engine: the tree built from the sample conversation (leaves and summary
//! layers, each node covering its documents' turns), kept in the store and reused, rebuilt when
//! the documents change, and its collapsed retrieval within upstream's limits.

use mb_baselines::raptor::tree::LEAF_TOKENS;
use mb_baselines::tokens::TokenCounter;
use mb_baselines::TrainingDialog;
use mb_core::Lang;
use mb_datasets::dataset::CorpusFormat;
use mb_llm::{Message, Role};

use crate::common::{context, engine, offline, sample, system};

/// The layers of the stored tree's nodes, and how many per layer.
fn layers(engine: &mb_engine::Engine, namespace: &str) -> Vec<usize> {
    let mut counts = Vec::new();
    for record in engine.records(namespace).unwrap() {
        let record = record.unwrap();
        if record.attribute("raptor") != Some("node") {
            continue;
        }
        let layer: usize = record.attribute("layer").unwrap().parse().unwrap();
        if counts.len() <= layer {
            counts.resize(layer + 1, 0);
        }
        counts[layer] += 1;
    }
    counts
}

#[tokio::test]
async fn the_tree_is_built_once_kept_and_rebuilt_when_documents_change() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let raptor = system("raptor", context(engine.clone(), "r", offline()));
    let (conversation, qa) = sample();
    raptor
        .memorize_corpus(&conversation, CorpusFormat::Locomo)
        .await
        .unwrap();
    assert!(
        layers(&engine, "r").is_empty(),
        "the tree waits for a question"
    );

    let tokens = TokenCounter::new().unwrap();
    let (question, evidence, _) = &qa[0];
    let hits = raptor.retrieve(question, Lang::En, 10).await.unwrap();
    let built = layers(&engine, "r");
    assert!(
        built.len() >= 2 && built[0] > 11,
        "leaves and a summary layer: {built:?}"
    );
    assert!(hits.len() <= 10 && !hits.is_empty());
    let used: usize = hits.iter().map(|h| tokens.count(&h.text)).sum();
    assert!(used <= 3500, "{used} tokens");
    assert!(
        hits.iter().all(|h| !h.turns.is_empty()),
        "every node covers turns"
    );
    // Leaves hold at most 100 tokens (sentence pieces joined by spaces).
    for record in engine.records("r").unwrap() {
        let record = record.unwrap();
        if record.attribute("layer") == Some("0") {
            assert!(
                tokens.count(&record.text) <= LEAF_TOKENS + 5,
                "{}",
                record.text
            );
        }
    }
    let found = hits
        .iter()
        .any(|h| h.turns.iter().any(|t| evidence.contains(t)));
    assert!(found, "{question}: {evidence:?} not under any of {hits:?}");

    // Another process on the same store reuses the stored tree.
    let ids = |engine: &mb_engine::Engine| -> Vec<u64> {
        engine
            .records("r")
            .unwrap()
            .map(Result::unwrap)
            .filter(|r| r.attribute("raptor") == Some("node"))
            .map(|r| r.id.0)
            .collect()
    };
    let before = {
        let mut ids = ids(&engine);
        ids.sort_unstable();
        ids
    };
    let again = system("raptor", context(engine.clone(), "r", offline()));
    again.retrieve(question, Lang::En, 10).await.unwrap();
    let mut after = ids(&engine);
    after.sort_unstable();
    assert_eq!(before, after, "the tree was not rebuilt");

    // A new dialog makes the next question rebuild it.
    let messages = vec![Message {
        role: Role::User,
        content: "My favourite mountain is Ben Nevis.".into(),
    }];
    again
        .memorize_dialog(TrainingDialog {
            test_idx: 7,
            dataset: "t",
            lang: Lang::En,
            messages: &messages,
            metadata: None,
        })
        .await
        .unwrap();
    let hits = again
        .retrieve("favourite mountain", Lang::En, 10)
        .await
        .unwrap();
    assert!(
        hits.iter().any(|h| h.text.contains("Ben Nevis")),
        "{hits:?}"
    );
    let mut rebuilt = ids(&engine);
    rebuilt.sort_unstable();
    assert_ne!(before, rebuilt);
}

/// Upstream's `split_text` (vendored `raptor/utils.py`) on standard input's documents joined as
/// RAPTOR joins them, with tiktoken's cl100k (its file given through `TIKTOKEN_CACHE_DIR`).
const SPLIT_TEXT_PY: &str = r#"
import json, types
import tiktoken
package = types.ModuleType("raptor")
package.__path__ = [root + "/baselines/raptor/raptor"]
sys.modules["raptor"] = package
from raptor.utils import split_text
case = json.load(sys.stdin)
encoding = tiktoken.get_encoding("cl100k_base")
text = "\n\n".join(case["documents"])
print(json.dumps({str(m): split_text(text, encoding, m) for m in case["limits"]}))
"#;

/// tiktoken-rs's copy of the cl100k ranks in the cargo registry (the file tiktoken downloads).
fn cl100k_file() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")))?;
    for registry in std::fs::read_dir(home.join("registry/src")).ok()?.flatten() {
        for krate in std::fs::read_dir(registry.path()).ok()?.flatten() {
            let file = krate.path().join("assets/cl100k_base.tiktoken");
            if krate
                .file_name()
                .to_string_lossy()
                .starts_with("tiktoken-rs-")
                && file.is_file()
            {
                return Some(file);
            }
        }
    }
    None
}

#[test]
fn leaves_are_upstreams_chunks() {
    let Some(side) = mb_core::test_data::UpstreamPython::find() else {
        return;
    };
    let Some(ranks) = cl100k_file() else {
        return mb_core::test_data::skip("tiktoken-rs's cl100k file is not in the cargo registry");
    };
    let cache = tempfile::tempdir().unwrap();
    // tiktoken's cache name of the file: the SHA-1 of its download address.
    std::fs::copy(
        ranks,
        cache
            .path()
            .join("9b5ad71b2ce5302211f9c61530b329a4922fc6a4"),
    )
    .unwrap();
    let (conversation, _) = sample();
    let mut documents: Vec<String> =
        mb_baselines::units::corpus_units(&conversation, mb_baselines::units::Granularity::Message)
            .into_iter()
            .map(|u| u.content)
            .collect();
    documents.push(format!(
        "Conversation 3_0:\nSpeaker user says: {}",
        "a, b; c: ".repeat(80)
    ));
    let limits = [100usize, 12];
    let input = serde_json::json!({"documents": documents, "limits": limits});
    let mut command = side.script(SPLIT_TEXT_PY);
    command.env("TIKTOKEN_CACHE_DIR", cache.path());
    let theirs = mb_core::test_data::run_json(&mut command, &input.to_string());
    let tokens = TokenCounter::new().unwrap();
    for limit in limits {
        let ours: Vec<String> =
            mb_baselines::raptor::chunk::split_documents(&documents, limit, &tokens)
                .into_iter()
                .map(|c| c.text)
                .collect();
        let expected: Vec<String> =
            serde_json::from_value(theirs[limit.to_string()].clone()).unwrap();
        assert_eq!(ours, expected, "limit {limit}");
    }
}
