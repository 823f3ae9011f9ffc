//! NLTK 3.9.1 (setup venv) against our tokenizers and METEOR, on the real LoCoMo turns and
//! HelloBench instructions of `../shared/data` (skipped when absent, hand-written tricky
//! strings then only). The Python side needs no NLTK data: `NLTKWordTokenizer` directly,
//! `PunktSentenceTokenizer` with our parameters in place of the trained English model, and
//! `meteor_score` with a WordNet stand-in (no synsets, as our `NoSynonyms`, or a fixed table).

use std::collections::{BTreeSet, HashMap};

use crate::common::{root, venv_python};
use mb_eval::metrics::meteor::{meteor, NoSynonyms, Synonyms};
use mb_eval::metrics::punkt::{sent_tokenize, ABBREVIATIONS, SENTENCE_STARTERS};
use mb_eval::metrics::tokenize::{treebank_tokenize, word_tokenize};
use mb_text::porter::stem;
use serde_json::{json, Value};

const PYTHON: &str = r#"
import json, struct, sys
from nltk.tokenize.destructive import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from nltk.translate.meteor_score import meteor_score
data = json.load(sys.stdin)
params = PunktParameters()
params.abbrev_types = set(data["abbreviations"])
params.sent_starters = set(data["starters"])
punkt = PunktSentenceTokenizer(params)
words = NLTKWordTokenizer()
def word_tokenize(text):
    return [token for sentence in punkt.tokenize(text) for token in words.tokenize(sentence)]
class Lemma:
    def __init__(self, name): self._name = name
    def name(self): return self._name
class Synset:
    def __init__(self, names): self.names = names
    def lemmas(self): return [Lemma(n) for n in self.names]
class WordNet:
    def __init__(self, table): self.table = table
    def synsets(self, word): return [Synset(names) for names in self.table.get(word, [])]
texts, pairs = data["texts"], data["pairs"]
def bits(x):  # exact, where a JSON float would go through two decimal conversions
    return struct.unpack("<Q", struct.pack("<d", x))[0]
def scores(wordnet):
    return [bits(meteor_score([word_tokenize(r) for r in refs], word_tokenize(h), wordnet=wordnet))
            for refs, h in pairs]
print(json.dumps([
    [punkt.tokenize(t) for t in texts],
    [words.tokenize(t) for t in texts],
    [word_tokenize(t) for t in texts],
    scores(WordNet({})),
    scores(WordNet(data["synonyms"])),
]))
"#;

const TRICKY: [&str; 32] = [
    "\"Quoted,\" he said -- 'twas the night... (really!) [sic] {x} <y>",
    "I can't, won't, shouldn't've; gonna/wanna gimme lemme more'n d'ye. Cannot! wannabe",
    "Prices: $3.88, 1,000 units & 50% off @ store #4; e.g. the one Mr. Smith's.",
    "“Curly quotes” and ‘single ones’ «guillemets» „low“ end.",
    "Trailing comma,",
    "colon: then 12:30 and 3,5 and a,b",
    "She said 'hi' and 'x' 'bye'. 'm 's 'd 'n 'T 'ſ",
    "'Tis fine, 'twas too. WANNA go? Cannot! gİmme 'tıs",
    "Ellipsis.. and... four.... Then . . . more. . . . Done",
    "It's O'Neil's cat's toy.'' And ``this'' too.",
    "ending with quote.\"",
    "He left.\" She stayed.\"\n\"Why?\" he asked. \"No.\"--fine.",
    "Is it?\", she asked. (Yes.) [No!] {Maybe.} Ok.) then",
    "Dr. Who met J. K. Rowling at 5 p.m. on Jan. 3. The U.S. team won. etc. The end.",
    "It cost 41. She paid 3.5. then left. In 2019. we moved. Plan B. \"Go\" A. 5",
    "no final punctuation",
    "Tabs\tand\nnewlines  spaces\r\nand\x0bvt\x0cff\u{1c}fs\u{1f}us\u{a0}nbsp",
    "Emoji 🦀 and ünïcödé wörds. Ελληνικά ΣΟΦΟΣ. Done!",
    "Combining 'x\u{301} mark, cannot\u{301} and superscript 'a² cannot² x.",
    "   leading spaces. And trailing ones.   ",
    "Question?! Exclaim!!! Mixed?!? Next",
    "A sentence.\n\nA new paragraph.\n- a list item.\n- another one.",
    "Mr.Smith and Mrs.Jones met at St.Paul's.No space.",
    "x.",
    ".",
    "...",
    "",
    "?!",
    "\"",
    "'Hello' 'world.' 'Yes.' Quote' s",
    "Numbers 1.5. 2,000. -3. .5 and ## signs ##number##.",
    "See Fig. 3 and ex-Dr. Who, co. Ltd. Inc. The rest. Sept. 11 was a Tues. In fact.",
];

/// A lightly edited copy: every fourth word dropped, longer words given an `s` (often a stem
/// match), two words swapped, the first period turned into an exclamation mark.
pub fn edited(text: &str) -> String {
    let mut words: Vec<String> = text
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
        .collect();
    if words.len() > 3 {
        words.swap(1, 2);
    }
    words.join(" ").replacen(". ", "! ", 1)
}

/// The first `max` bytes of `text`, cut at a character boundary (Python's METEOR is quadratic).
pub fn prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Real texts: every LoCoMo turn and HelloBench instruction, or none when the data is absent.
pub fn real_texts() -> (Vec<String>, Vec<String>) {
    let data = root().join("../shared/data");
    let Ok(locomo) = std::fs::read_to_string(data.join("locomo/locomo10-dev.json")) else {
        eprintln!("{} absent: tricky strings only", data.display());
        return (Vec::new(), Vec::new());
    };
    let samples: Vec<Value> = serde_json::from_str(&locomo).unwrap();
    let mut turns = Vec::new();
    for sample in &samples {
        let conversation = sample["conversation"].as_object().unwrap();
        for session in 1.. {
            let Some(session) = conversation.get(&format!("session_{session}")) else {
                break;
            };
            for turn in session.as_array().unwrap() {
                turns.push(turn["text"].as_str().unwrap().to_string());
            }
        }
    }
    let mut instructions = Vec::new();
    for file in [
        "chat",
        "heuristic_text_generation",
        "open_ended_qa",
        "text_completion",
    ] {
        let text = std::fs::read_to_string(data.join(format!("hellobench/{file}.jsonl"))).unwrap();
        for line in text.lines() {
            let row: Value = serde_json::from_str(line).unwrap();
            instructions.push(row["instruction"].as_str().unwrap().to_string());
        }
    }
    (turns, instructions)
}

/// A fixed synonym table over stems: each of some stems lists two "synsets" naming other
/// stems, with names NLTK drops (`_`) and names that cannot match (upper case).
struct Table(HashMap<String, Vec<Vec<String>>>);

impl Synonyms for Table {
    fn synonyms(&self, word: &str) -> Vec<String> {
        self.0
            .get(word)
            .into_iter()
            .flatten()
            .flatten()
            .cloned()
            .collect()
    }
}

fn synonym_table(texts: &[String]) -> Table {
    let stems: Vec<String> = texts
        .iter()
        .flat_map(|t| word_tokenize(t))
        .map(|w| stem(&w.to_lowercase()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut table = HashMap::new();
    for (i, s) in stems.iter().enumerate().step_by(3) {
        let other = |k: usize| stems[(i + k) % stems.len()].clone();
        table.insert(
            s.clone(),
            vec![
                vec![other(1), format!("{s}_{}", other(2))],
                vec![other(5).to_uppercase(), other(7)],
            ],
        );
    }
    Table(table)
}

#[test]
fn tokens_sentences_and_scores_match_nltk() {
    let (turns, instructions) = real_texts();
    let mut texts: Vec<String> = TRICKY.iter().map(|s| s.to_string()).collect();
    texts.extend(turns.iter().cloned());
    texts.extend(instructions.iter().cloned());

    // Pairs (references, hypothesis): each sampled text against the one after it (the next
    // turn, instruction or tricky string) and against a lightly edited copy of itself; some
    // with both as references.
    let with_next = |list: &[String], step: usize, max: usize| -> Vec<(String, String)> {
        (0..list.len())
            .step_by(step)
            .map(|k| {
                let next = &list[(k + 1) % list.len()];
                (
                    prefix(&list[k], max).to_string(),
                    prefix(next, max).to_string(),
                )
            })
            .collect()
    };
    let tricky: Vec<String> = TRICKY.iter().map(|s| s.to_string()).collect();
    let mut sampled = with_next(&tricky, 1, usize::MAX);
    sampled.extend(with_next(&turns, 16, usize::MAX));
    sampled.extend(with_next(&instructions, 6, 1200));
    let mut pairs: Vec<(Vec<String>, String)> = Vec::new();
    for (i, (text, next)) in sampled.iter().enumerate() {
        pairs.push((vec![text.clone()], next.clone()));
        pairs.push((vec![text.clone()], edited(text)));
        if i % 5 == 0 {
            pairs.push((vec![next.clone(), text.clone()], edited(text)));
        }
    }
    let sampled: Vec<String> = sampled.into_iter().map(|(text, _)| text).collect();
    let table = synonym_table(&sampled);

    let input = json!({
        "abbreviations": ABBREVIATIONS,
        "starters": SENTENCE_STARTERS,
        "texts": texts,
        "pairs": pairs,
        "synonyms": table.0,
    });
    type Output = (
        Vec<Vec<String>>,
        Vec<Vec<String>>,
        Vec<Vec<String>>,
        Vec<u64>,
        Vec<u64>,
    );
    let (sentences, treebank, words, plain, with_synonyms): Output = venv_python(PYTHON, &input);

    for (i, text) in texts.iter().enumerate() {
        assert_eq!(sent_tokenize(text), sentences[i], "sentences of {text:?}");
        assert_eq!(
            treebank_tokenize(text),
            treebank[i],
            "NLTKWordTokenizer on {text:?}"
        );
        assert_eq!(word_tokenize(text), words[i], "word_tokenize on {text:?}");
    }
    for (synonyms, expected) in [
        (&NoSynonyms as &dyn Synonyms, &plain),
        (&table as &dyn Synonyms, &with_synonyms),
    ] {
        for ((references, hypothesis), expected) in pairs.iter().zip(expected) {
            let references: Vec<Vec<String>> =
                references.iter().map(|r| word_tokenize(r)).collect();
            let ours = meteor(&references, &word_tokenize(hypothesis), synonyms);
            let expected = f64::from_bits(*expected);
            assert!(
                (ours - expected).abs() < 1e-12,
                "{references:?} / {hypothesis:?}: {ours} vs {expected}"
            );
            // Same operations in the same order on the same libm: the very same double.
            assert_eq!(ours.to_bits(), expected.to_bits(), "{ours} vs {expected}");
        }
    }
    let score = |bits: &u64| f64::from_bits(*bits);
    let matched = plain.iter().filter(|&s| score(s) > 0.0).count();
    let synonym_gain = plain
        .iter()
        .zip(&with_synonyms)
        .filter(|(p, s)| score(s) > score(p))
        .count();
    eprintln!(
        "{} texts, {} pairs ({matched} scoring above 0, {synonym_gain} raised by synonyms)",
        texts.len(),
        pairs.len(),
    );
    assert!(matched > pairs.len() / 3);
    assert!(synonym_gain > 0);
    if !turns.is_empty() {
        assert!(texts.len() > 5_000 && pairs.len() > 400, "{}", pairs.len());
    }
}
