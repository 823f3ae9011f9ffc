//! LoCoMo's `f1`: token F1 over normalized, Porter-stemmed answers, with per-category rules.

use std::collections::HashMap;

use mb_text::porter::stem;

/// The two answer options of a category-5 (adversarial) question, as upstream renders them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Option (a).
    pub a: String,
    /// Option (b).
    pub b: String,
}

/// LoCoMo's score of `response` for a question of `category` (1–5) with `golden` answer.
///
/// - 1 (multi-hop): both sides split on commas; mean over gold parts of the best F1 against any
///   predicted part.
/// - 2, 3, 4: token F1; for 3 only the gold text before the first `;` counts.
/// - 5 (adversarial): a one-letter or `(x)` reply is mapped to its option's text; the score is 1
///   when the answer says "no information available" or "not mentioned", else 0.
pub fn locomo_f1(response: &str, golden: &str, category: u8, options: Option<&Options>) -> f64 {
    let output = response.trim();
    match category {
        5 => {
            let output = map_option(output, options).to_lowercase();
            let abstains =
                output.contains("no information available") || output.contains("not mentioned");
            f64::from(u8::from(abstains))
        }
        1 => {
            let predictions: Vec<&str> = output.split(',').map(str::trim).collect();
            let parts: Vec<&str> = golden.split(',').map(str::trim).collect();
            let total: f64 = parts
                .iter()
                .map(|gold| {
                    predictions
                        .iter()
                        .map(|p| token_f1(p, gold))
                        .fold(0.0, f64::max)
                })
                .sum();
            total / parts.len() as f64
        }
        3 => token_f1(output, golden.split(';').next().unwrap_or(golden)),
        _ => token_f1(output, golden),
    }
}

fn map_option<'a>(output: &'a str, options: Option<&'a Options>) -> &'a str {
    let Some(options) = options else {
        return output;
    };
    let lower = output.to_lowercase();
    match lower.chars().count() {
        1 if lower.contains('a') => &options.a,
        1 => &options.b,
        3 if lower.contains("(a)") => &options.a,
        3 => &options.b,
        _ => output,
    }
}

/// Token F1 (multiset overlap) of two answers after normalization and stemming; 0 without
/// overlap.
pub fn token_f1(prediction: &str, golden: &str) -> f64 {
    let predicted = tokens(prediction);
    let expected = tokens(golden);
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in &expected {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    let mut same = 0usize;
    for t in &predicted {
        if let Some(c) = counts.get_mut(t.as_str()).filter(|c| **c > 0) {
            *c -= 1;
            same += 1;
        }
    }
    if same == 0 {
        return 0.0;
    }
    let precision = same as f64 / predicted.len() as f64;
    let recall = same as f64 / expected.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// The share of `golden`'s tokens (normalized and stemmed, as [`token_f1`] counts them, repeats
/// matched once each) that `prediction` contains; 0 when `golden` has none.
pub fn token_recall(prediction: &str, golden: &str) -> f64 {
    let expected = tokens(golden);
    if expected.is_empty() {
        return 0.0;
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    for t in tokens(prediction) {
        *counts.entry(t).or_default() += 1;
    }
    let found = expected
        .iter()
        .filter(|t| match counts.get_mut(t.as_str()) {
            Some(c) if *c > 0 => {
                *c -= 1;
                true
            }
            _ => false,
        })
        .count();
    found as f64 / expected.len() as f64
}

/// Stemmed tokens of the normalized text.
fn tokens(text: &str) -> Vec<String> {
    normalize(text).split_whitespace().map(stem).collect()
}

/// LoCoMo's `normalize_answer`: drop commas, lowercase, drop ASCII punctuation, blank out the
/// words a/an/the/and (as `\b(a|an|the|and)\b` does: whole runs of word characters), collapse
/// whitespace.
pub fn normalize(text: &str) -> String {
    let cleaned: String = text
        .replace(',', "")
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    let mut out = String::with_capacity(cleaned.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if matches!(word.as_str(), "a" | "an" | "the" | "and") {
            out.push(' ');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in cleaned.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_matches_the_rules() {
        assert_eq!(normalize("The cat, and THE dog!"), "cat dog");
        assert_eq!(normalize("an apple—a day"), "apple— day");
        assert_eq!(normalize("Band's theme"), "bands theme");
    }

    #[test]
    fn token_f1_by_hand() {
        // "running dogs" → [run, dog]; "the dog ran" → [dog, ran]: overlap 1, P = R = 1/2.
        assert!((token_f1("running dogs", "the dog ran") - 0.5).abs() < 1e-12);
        assert_eq!(token_f1("7 May 2023", "7 May 2023"), 1.0);
        assert_eq!(token_f1("nothing", "else"), 0.0);
        assert_eq!(token_f1("", "else"), 0.0);
        // Multiset: "dog dog cat" vs "dog cat cat": overlap 2 of 3 each → 2/3.
        assert!((token_f1("dog dog cat", "dog cat cat") - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn category_rules() {
        // Category 1: gold parts "pottery", "painting"; best matches 1 and 0 → mean 0.5.
        let f = locomo_f1("pottery, hiking", "pottery, painting", 1, None);
        assert!((f - 0.5).abs() < 1e-12);
        // Category 3: only the gold before ';' counts.
        assert_eq!(
            locomo_f1("Likely yes", "Likely yes; she mentioned it", 3, None),
            1.0
        );
        // Category 5: option letters map to their text.
        let options = Options {
            a: "Not mentioned in the conversation".into(),
            b: "Sweden".into(),
        };
        assert_eq!(locomo_f1(" a ", "x", 5, Some(&options)), 1.0);
        assert_eq!(locomo_f1("(b)", "x", 5, Some(&options)), 0.0);
        assert_eq!(locomo_f1("(A)", "x", 5, Some(&options)), 1.0);
        assert_eq!(
            locomo_f1("No information available.", "x", 5, Some(&options)),
            1.0
        );
        assert_eq!(locomo_f1("Sweden", "x", 5, None), 0.0);
    }
}
