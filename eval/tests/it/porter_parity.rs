//! The Porter stemmer against NLTK's `PorterStemmer()` (setup venv) on every distinct word of
//! the LoCoMo and DialSim texts in `../shared/data` (skipped when absent).

use std::collections::BTreeSet;

use crate::common::{root, venv_python};
use mb_text::porter::stem;

#[test]
fn matches_nltk_on_real_vocabulary() {
    let data = root().join("../shared/data");
    let mut text = String::new();
    for file in [
        "locomo/locomo10-dev.json",
        "dialsim/dialsim_corpus_friends.txt",
        "dialsim/dialsim_corpus_bigbang.txt",
    ] {
        match std::fs::read_to_string(data.join(file)) {
            Ok(content) => text.push_str(&content),
            Err(_) => {
                mb_core::test_data::skip(&format!("{} not found", data.join(file).display()));
                return;
            }
        }
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(words.len() > 5_000, "{} words", words.len());

    let expected: Vec<String> = venv_python(
        "import json, sys; from nltk.stem import PorterStemmer; p = PorterStemmer(); \
         print(json.dumps([p.stem(w) for w in json.load(sys.stdin)]))",
        &words,
    );

    let mismatches: Vec<String> = words
        .iter()
        .zip(&expected)
        .filter(|(w, e)| stem(w) != **e)
        .map(|(w, e)| format!("{w}: ours {}, nltk {e}", stem(w)))
        .collect();
    eprintln!("{} words compared", words.len());
    assert!(
        mismatches.is_empty(),
        "{} mismatches, e.g. {:?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(20)]
    );
}
