//! Text heuristics behind the offline operations: sentences, content terms, overlap.

use std::collections::{HashMap, HashSet};

use mb_core::Lang;
use mb_text::Analyzer;

/// The analyzer for a language: Whoosh-style English, jieba for Chinese.
pub fn analyzer(lang: Lang) -> Analyzer {
    match lang {
        Lang::En => Analyzer::Standard,
        Lang::Zh => Analyzer::Cjk,
    }
}

/// Content terms of `text` (lowercased, stop words removed), in order, repeats kept.
pub fn terms(text: &str, lang: Lang) -> Vec<String> {
    analyzer(lang)
        .analyze(text)
        .into_iter()
        .map(|t| t.text)
        .collect()
}

/// Distinct content terms.
pub fn term_set(text: &str, lang: Lang) -> HashSet<String> {
    terms(text, lang).into_iter().collect()
}

/// The `k` most frequent content terms of `text`, earlier ones first on ties.
pub fn top_terms(text: &str, lang: Lang, k: usize) -> Vec<String> {
    let terms = terms(text, lang);
    let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
    for (position, term) in terms.iter().enumerate() {
        counts.entry(term.as_str()).or_insert((0, position)).0 += 1;
    }
    let mut ranked: Vec<(&str, (usize, usize))> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1)));
    ranked
        .into_iter()
        .take(k)
        .map(|(term, _)| term.to_string())
        .collect()
}

/// The first `n` sentences of `text`, joined by spaces.
pub fn lead(text: &str, n: usize) -> String {
    sentences(text)
        .into_iter()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits text into sentences at `.`, `!`, `?`, their CJK forms and line breaks; trims them and
/// drops empty ones.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            push_sentence(&mut out, &mut current);
            continue;
        }
        current.push(c);
        let ends = matches!(c, '。' | '！' | '？')
            || (matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace()));
        if ends {
            push_sentence(&mut out, &mut current);
        }
    }
    push_sentence(&mut out, &mut current);
    out
}

fn push_sentence(out: &mut Vec<String>, current: &mut String) {
    let sentence = current.trim();
    if !sentence.is_empty() {
        out.push(sentence.to_string());
    }
    current.clear();
}

/// Jaccard similarity of two term sets (0 when both are empty).
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

const FIRST_PERSON_EN: &[&str] = &[
    "i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "we", "our", "us",
];

/// Whether `sentence` speaks in the first person (`I`, `my`, `we`…; `我` in Chinese): the
/// offline operations keep such sentences as facts about the speaker.
pub fn is_first_person(sentence: &str, lang: Lang) -> bool {
    match lang {
        Lang::En => sentence
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .any(|w| FIRST_PERSON_EN.contains(&w.to_lowercase().as_str())),
        Lang::Zh => sentence.contains('我'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sentences_without_breaking_decimals() {
        assert_eq!(
            sentences("I paid 3.50 for it. Was it cheap? Yes!\nNew line"),
            vec!["I paid 3.50 for it.", "Was it cheap?", "Yes!", "New line"]
        );
        assert_eq!(sentences("我喜欢猫。你呢？"), vec!["我喜欢猫。", "你呢？"]);
    }

    #[test]
    fn jaccard_of_term_sets() {
        let a = term_set("the cat sat on the mat", Lang::En);
        let b = term_set("a cat on a mat", Lang::En);
        assert!((jaccard(&a, &b) - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(jaccard(&HashSet::new(), &HashSet::new()), 0.0);
    }
}
