//! The default ONNX embedder against Python onnxruntime, on texts of every shape we meet.
//!
//! Needs `bash scripts/setup.sh` (runtime, model and the Python venv under `.cache/`).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use mb_embed::{Embedder, OnnxEmbedder};

fn embedder() -> &'static OnnxEmbedder {
    static EMBEDDER: OnceLock<OnnxEmbedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| match OnnxEmbedder::open_default() {
        Ok(embedder) => embedder,
        Err(e) => panic!("{e}"),
    })
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn checkout() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

fn long_text() -> String {
    "Caroline went to the LGBTQ support group yesterday and said it was powerful. ".repeat(40)
}

fn texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        "Hey Mel! Good to see you! How have you been?",
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "The transgender stories were so inspiring! I was so happy and thankful for all the support.",
        "Did you finish the pottery class? I loved the bowl you made last week :)",
        "What is the capital of France?",
        "请根据上述案情，判断被告人是否构成盗窃罪。",
        "Émile a visité São Paulo en 2019 — naïve café résumé.",
        "🎉🎉 party time!!! 🎂",
        "broken \u{FFFD}\u{FFFD} bytes decoded as replacement characters",
        "",
        "   \t\n  ",
        "a",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    texts.push(long_text());
    texts
}

fn python_reference(texts: &[String], max_tokens: usize) -> Vec<Vec<f32>> {
    let root = checkout();
    let python = root.join(".cache/venv/bin/python");
    assert!(
        python.exists(),
        "{} missing: run `bash scripts/setup.sh`",
        python.display()
    );
    let job = serde_json::json!({
        "model_dir": root.join(".cache/models/all-minilm-l6-v2-int8"),
        "texts": texts,
        "max_tokens": max_tokens,
    });
    let mut child = Command::new(python)
        .arg(root.join("scripts/embed_reference.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(job.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "reference script failed");
    let parsed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    serde_json::from_value(parsed["vectors"].clone()).unwrap()
}

#[test]
fn matches_python_onnxruntime_text_by_text() {
    let embedder = embedder();
    let texts = texts();
    let max_tokens = embedder.config().max_tokens.unwrap();
    let reference = python_reference(&texts, max_tokens);
    for (text, expected) in texts.iter().zip(&reference) {
        let ours = embedder.embed_one(text).unwrap();
        assert_eq!(ours.len(), 384);
        let similarity = cosine(&ours, expected);
        assert!(similarity >= 0.999, "cosine {similarity} for {text:?}");
    }
}

#[test]
fn batches_agree_with_single_texts_and_keep_input_order() {
    let embedder = embedder();
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batched = embedder.embed(&refs).unwrap();
    assert_eq!(batched.len(), texts.len());
    for (text, vector) in refs.iter().zip(&batched) {
        let alone = embedder.embed_one(text).unwrap();
        let similarity = cosine(&alone, vector);
        assert!(similarity >= 0.999, "cosine {similarity} for {text:?}");
        let norm = cosine(vector, vector).sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm} for {text:?}");
    }
}

#[test]
fn paraphrases_are_closer_than_unrelated_sentences() {
    let embedder = embedder();
    let pairs = [
        (
            "I adopted a puppy last weekend.",
            "Last weekend I got a new dog from the shelter.",
            "The quarterly tax report is due on Monday.",
        ),
        (
            "How do I bake sourdough bread?",
            "What is the recipe for making sourdough?",
            "The train to Berlin leaves at nine.",
        ),
        (
            "She is training for a marathon in April.",
            "In April she will run a marathon, so she is practising.",
            "My laptop screen cracked yesterday.",
        ),
    ];
    for (anchor, paraphrase, unrelated) in pairs {
        let v = embedder.embed(&[anchor, paraphrase, unrelated]).unwrap();
        let (close, far) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
        assert!(
            close > far + 0.2,
            "{anchor:?}: paraphrase {close}, unrelated {far}"
        );
    }
}

#[test]
fn long_and_degenerate_texts_are_well_defined() {
    let embedder = embedder();
    let max_tokens = embedder.config().max_tokens.unwrap();
    let huge = "memory ".repeat(20_000); // 140k characters
    assert_eq!(embedder.token_count(&huge).unwrap(), max_tokens);
    let vectors = embedder.embed(&[huge.as_str(), "", " \n\t "]).unwrap();
    for vector in &vectors {
        assert_eq!(vector.len(), 384);
        assert!(vector.iter().all(|x| x.is_finite()));
    }
    // Truncation means a huge text embeds like its own prefix.
    let prefix: String = huge.chars().take(4_000).collect();
    let similarity = cosine(&vectors[0], &embedder.embed_one(&prefix).unwrap());
    assert!(similarity > 0.999, "{similarity}");
    assert!(embedder.embed(&[]).unwrap().is_empty());
}

#[test]
fn concurrent_callers_share_the_session_pool() {
    let embedder = embedder();
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let expected = embedder.embed(&refs).unwrap();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..3 {
                    let got = embedder.embed(&refs).unwrap();
                    for (a, b) in got.iter().zip(&expected) {
                        assert!(cosine(a, b) > 0.999);
                    }
                }
            });
        }
    });
}

#[test]
fn a_lone_text_on_every_core_embeds_as_the_pool_does() {
    let mut config = mb_embed::OnnxConfig::default_model().unwrap();
    config.solo_threads = 1;
    let pool_only = OnnxEmbedder::new(config).unwrap();
    for text in texts() {
        let solo = embedder().embed_one(&text).unwrap();
        let pooled = pool_only.embed_one(&text).unwrap();
        let similarity = cosine(&solo, &pooled);
        assert!(similarity >= 0.9999, "cosine {similarity} for {text:?}");
    }
    // Two texts are one batch, halved so that both sessions run: each as it embeds alone.
    let pair = ["I adopted a cat named Miso.", "The marathon is in May."];
    for (text, vector) in pair.iter().zip(embedder().embed(&pair).unwrap()) {
        let similarity = cosine(&embedder().embed_one(text).unwrap(), &vector);
        assert!(similarity >= 0.999, "cosine {similarity} for {text:?}");
    }
}
