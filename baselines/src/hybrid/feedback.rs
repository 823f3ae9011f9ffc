//! Pseudo-relevance feedback on the BM25 side (RM3-style): the words that weigh most in the
//! first fused units, and little across the other candidates, become a second BM25 query
//! whose ranking is fused with the first ones. A question about "Melanie's hobbies" whose
//! first units talk about pottery and camping then also finds the units that say "kiln" or
//! "tent".
//!
//! A term's weight is `Σ_d s_d · tf(t, d) / |d|` over the first `units` units (`s_d` their fused
//! score over the best's), times its rarity among the candidates, `ln(1 + N / df(t))`: the
//! candidates stand in for the collection, whose frequencies the engine keeps to itself. The
//! question's own terms, numbers, words of fewer than three letters and [`FUNCTION_WORDS`]
//! are never added.

use std::collections::{HashMap, HashSet};

use mb_engine::{Analyzer, Hit};

/// Everyday function words the index keeps (its stop list is Whoosh's 34 words) but that say
/// nothing about what a unit is about: expanding with them finds every unit.
const FUNCTION_WORDS: &[&str] = &[
    "about", "again", "all", "also", "am", "any", "because", "been", "being", "but", "could",
    "did", "does", "doing", "done", "even", "ever", "get", "gets", "getting", "going", "got",
    "had", "has", "he", "her", "here", "hers", "him", "his", "how", "i'm", "into", "its", "just",
    "know", "like", "lot", "me", "more", "much", "my", "now", "oh", "our", "out", "over", "really",
    "she", "should", "so", "some", "such", "than", "thanks", "them", "then", "there", "these",
    "they", "thing", "things", "think", "those", "too", "totally", "up", "very", "was", "way",
    "were", "what", "where", "which", "while", "who", "why", "would", "yeah", "yes", "you're",
];

/// The expansion query for the candidates `hits` (best first): the `terms` heaviest words of
/// the first `units`, each once as it was written (its first spelling), joined by spaces;
/// empty when none qualifies. `question` is what the first rankings were asked.
pub fn expansion(
    hits: &[Hit],
    question: &str,
    analyzer: Analyzer,
    units: usize,
    terms: usize,
) -> String {
    let asked: HashSet<String> = analyzer
        .analyze(question)
        .into_iter()
        .map(|t| t.text)
        .collect();
    let best = hits.first().map_or(0.0, |h| h.score);
    if best <= 0.0 || terms == 0 {
        return String::new();
    }
    let mut document_frequency: HashMap<String, u32> = HashMap::new();
    let mut weight: HashMap<String, f64> = HashMap::new();
    let mut spelling: HashMap<String, String> = HashMap::new();
    for (rank, hit) in hits.iter().enumerate() {
        let text = &hit.record.text;
        let analyzed = analyzer.analyze(text);
        let mut counts: HashMap<&str, u32> = HashMap::new();
        for term in &analyzed {
            *counts.entry(term.text.as_str()).or_default() += 1;
        }
        for term in counts.keys() {
            *document_frequency.entry(term.to_string()).or_default() += 1;
        }
        if rank >= units {
            continue;
        }
        let share = f64::from(hit.score / best) / analyzed.len().max(1) as f64;
        for term in &analyzed {
            let surface = text[term.start..term.end].to_lowercase();
            if asked.contains(&term.text) || !content_word(&surface) {
                continue;
            }
            *weight.entry(term.text.clone()).or_default() += share;
            spelling.entry(term.text.clone()).or_insert(surface);
        }
    }
    let candidates = hits.len() as f64;
    let mut ranked: Vec<(f64, &String)> = weight
        .iter()
        .map(|(term, w)| {
            let df = f64::from(document_frequency.get(term).copied().unwrap_or(1));
            (w * (1.0 + candidates / df).ln(), term)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    ranked
        .into_iter()
        .take(terms)
        .filter_map(|(_, term)| spelling.get(term).map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a lowercased word may expand a query: three letters or more, no digit, not a
/// function word.
fn content_word(word: &str) -> bool {
    word.chars().count() >= 3
        && !word.chars().any(|c| c.is_ascii_digit())
        && !FUNCTION_WORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mb_engine::{Record, RecordId};
    use std::collections::BTreeMap;

    fn hit(id: u64, text: &str, score: f32) -> Hit {
        Hit {
            record: Record {
                id: RecordId(id),
                text: text.to_string(),
                body: None,
                attributes: BTreeMap::new(),
                created_at_ms: 0,
                seq: id,
            },
            score,
        }
    }

    #[test]
    fn the_first_units_words_that_are_rare_among_the_candidates_expand_the_query() {
        let hits = vec![
            hit(1, "Melanie: pottery and the kiln", 2.0),
            hit(2, "Melanie: pottery in the kiln again", 1.5),
            hit(3, "Melanie: camping", 0.5),
            hit(4, "Caroline: the weather was nice today", 0.1),
            hit(5, "Caroline: nice weather for a walk", 0.1),
        ];
        let query = expansion(
            &hits,
            "What hobby does Melanie have?",
            Analyzer::Stemmed,
            2,
            2,
        );
        // "kiln" and "pottery" weigh most in the first two units ("again" is a function word);
        // "melanie" is asked already.
        assert_eq!(query, "kiln pottery");
        let words: Vec<&str> = query.split(' ').collect();
        assert!(!words.contains(&"melanie"));
        // Units past the first two never contribute: "camping" is only in the third.
        let wide = expansion(
            &hits,
            "What hobby does Melanie have?",
            Analyzer::Stemmed,
            2,
            20,
        );
        assert!(!wide.contains("camping"), "{wide}");
        assert!(expansion(&hits, "What hobby?", Analyzer::Stemmed, 3, 10).contains("camping"));
    }

    #[test]
    fn function_words_numbers_and_short_words_never_expand() {
        let hits = vec![hit(1, "i really think 2023 was so ok, yeah: marathon", 1.0)];
        assert_eq!(
            expansion(&hits, "when", Analyzer::Standard, 1, 10),
            "marathon"
        );
        assert_eq!(expansion(&[], "when", Analyzer::Standard, 1, 10), "");
        assert_eq!(expansion(&hits, "when", Analyzer::Standard, 1, 0), "");
    }
}
