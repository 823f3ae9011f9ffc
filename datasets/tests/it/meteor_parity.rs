//! NLTK's word tokenizer and METEOR (nltk 3.9.1 in the setup venv) against ours, on sentences
//! from the real data in `../shared/data` (skipped when absent) and hand-written tricky ones.
//! The Python side needs no NLTK data: it calls `NLTKWordTokenizer` directly and gives
//! `meteor_score` a WordNet stand-in without synsets (as our default `NoSynonyms`).

use crate::common::{root, venv_python};
use mb_datasets::metrics::meteor::{meteor, NoSynonyms};
use mb_datasets::metrics::tokenize::treebank_tokenize;
use serde_json::Value;

const PYTHON: &str = r#"
import json, sys
from nltk.tokenize.destructive import NLTKWordTokenizer
from nltk.translate.meteor_score import meteor_score
class NoWordNet:
    def synsets(self, word):
        return []
texts, pairs = json.load(sys.stdin)
tokenizer = NLTKWordTokenizer()
tokens = [tokenizer.tokenize(t) for t in texts]
scores = [meteor_score([tokenizer.tokenize(r)], tokenizer.tokenize(h), wordnet=NoWordNet()) for r, h in pairs]
print(json.dumps([tokens, scores]))
"#;

const TRICKY: [&str; 14] = [
    "\"Quoted,\" he said -- 'twas the night... (really!) [sic] {x} <y>",
    "I can't, won't, shouldn't've; gonna/wanna gimme lemme more'n d'ye",
    "Prices: $3.88, 1,000 units & 50% off @ store #4; e.g. Mr. Smith's.",
    "“Curly quotes” and ‘single ones’ «guillemets» end.",
    "Trailing comma,",
    "colon: then 12:30 and 3,5",
    "She said 'hi' and 'x' 'bye'.",
    "'Tis fine, 'twas too. WANNA go? Cannot!",
    "Ellipsis.. and... four....",
    "It's O'Neil's cat's toy.''",
    "ending with quote.\"",
    "no final punctuation",
    "Tabs\tand\nnewlines  spaces",
    "Emoji 🦀 and ünïcödé wörds.",
];

fn sentences() -> Vec<String> {
    let mut texts: Vec<String> = TRICKY.iter().map(|s| s.to_string()).collect();
    if let Ok(text) =
        std::fs::read_to_string(root().join("../shared/data/locomo/locomo10-dev.json"))
    {
        let samples: Vec<Value> = serde_json::from_str(&text).unwrap();
        let conversation = &samples[0]["conversation"];
        for session in 1..=6 {
            for turn in conversation[format!("session_{session}")]
                .as_array()
                .unwrap()
            {
                texts.push(turn["text"].as_str().unwrap().to_string());
            }
        }
    } else {
        eprintln!("../shared/data absent: tricky sentences only");
    }
    if let Ok(text) = std::fs::read_to_string(root().join("../shared/data/hellobench/chat.jsonl")) {
        for line in text.lines().take(60) {
            let row: Value = serde_json::from_str(line).unwrap();
            texts.push(row["instruction"].as_str().unwrap().to_string());
        }
    }
    texts
}

#[test]
fn tokens_and_scores_match_nltk() {
    let texts = sentences();
    // Each text against its neighbour, and against a lightly edited copy of itself.
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        pairs.push((text.clone(), texts[(i + 1) % texts.len()].clone()));
        let edited: String = text
            .split(' ')
            .enumerate()
            .filter(|(j, _)| j % 4 != 1)
            .map(|(_, w)| {
                if w.len() > 4 {
                    format!("{w}s")
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        pairs.push((text.clone(), edited));
    }
    let (tokens, scores): (Vec<Vec<String>>, Vec<f64>) = venv_python(PYTHON, &(&texts, &pairs));
    for (text, expected) in texts.iter().zip(&tokens) {
        assert_eq!(&treebank_tokenize(text), expected, "tokens of {text:?}");
    }
    for ((reference, hypothesis), expected) in pairs.iter().zip(&scores) {
        let ours = meteor(
            &[treebank_tokenize(reference)],
            &treebank_tokenize(hypothesis),
            &NoSynonyms,
        );
        assert!(
            (ours - expected).abs() < 1e-12,
            "{reference:?} / {hypothesis:?}: {ours} vs {expected}"
        );
    }
    assert!(scores.iter().filter(|s| **s > 0.0).count() > pairs.len() / 3);
}
