//! How textstat (upstream's readability package) cuts a response into words, letters and
//! sentences. Its rules are simple regular expressions; they are reproduced here character for
//! character, with Python's `\w` and `\s`, because every readability formula divides by these
//! counts.
//!
//! - [`words`]: punctuation removed except the apostrophe of a contraction, split on spaces;
//! - [`letter_count`]: the word characters, with every punctuation mark and space removed;
//! - [`sentence_count`]: runs of text between `.`, `!` and `?` that start at a word boundary,
//!   not counting runs of two words or fewer (at least one for any non-empty text).

use crate::metrics::pychars::{py_space, py_word};

/// The endings after which an apostrophe belongs to a contraction (`don't`, `it's`, `we've`).
const CONTRACTION_ENDINGS: [&str; 6] = ["t", "s", "d", "ve", "ll", "re"];

/// `text` without its punctuation: every character that is neither a word character nor a
/// space goes, except (when `keep_contractions`) an apostrophe followed by a contraction ending.
pub(crate) fn remove_punctuation(text: &str, keep_contractions: bool) -> String {
    let mut kept = String::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        let keep = if c == '\'' {
            let rest = &text[at + 1..];
            keep_contractions && CONTRACTION_ENDINGS.iter().any(|e| rest.starts_with(e))
        } else {
            py_word(c) || py_space(c)
        };
        if keep {
            kept.push(c);
        }
    }
    kept
}

/// The words of `text` as textstat lists them (contractions and hyphenated words are one word,
/// the hyphen dropped with the other punctuation).
pub(crate) fn words(text: &str) -> Vec<String> {
    remove_punctuation(text, true)
        .split(py_space)
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The letters (word characters) of `text`.
pub(crate) fn letter_count(text: &str) -> usize {
    text.chars()
        .filter(|c| !py_space(*c))
        .filter(|c| py_word(*c))
        .count()
}

/// The sentences of `text`: 0 for empty text, otherwise at least 1.
pub(crate) fn sentence_count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let runs = sentence_runs(text);
    let short = runs.iter().filter(|run| words(run).len() <= 2).count();
    (runs.len() - short).max(1)
}

/// The matches of `\b[^.!?]+[.!?]*`, left to right.
fn sentence_runs(text: &str) -> Vec<&str> {
    let ends = |c: char| matches!(c, '.' | '!' | '?');
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let before = i.checked_sub(1).map(|p| py_word(chars[p].1));
        let boundary = before.unwrap_or(false) != py_word(c);
        if !boundary || ends(c) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && !ends(chars[j].1) {
            j += 1;
        }
        while j < chars.len() && ends(chars[j].1) {
            j += 1;
        }
        let end = chars.get(j).map_or(text.len(), |(at, _)| *at);
        runs.push(&text[start..end]);
        i = j;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contractions_keep_their_apostrophe_and_quotes_lose_theirs() {
        assert_eq!(
            words("'Don't,' she said — it's a well-known fact."),
            ["Don't", "she", "said", "it's", "a", "wellknown", "fact"]
        );
        assert_eq!(letter_count("It's 3.5 km!"), 7);
    }

    #[test]
    fn short_runs_are_not_sentences_but_text_has_at_least_one() {
        // "Hi." and "Yes!" have two words or fewer; the middle run is a sentence.
        assert_eq!(sentence_count("Hi. This is a real sentence. Yes!"), 1);
        assert_eq!(sentence_count("One two three. Four five six? Seven."), 2);
        assert_eq!(sentence_count("ok"), 1);
        assert_eq!(sentence_count(""), 0);
        // A run starts only at a word boundary: the leading space and bracket are skipped.
        assert_eq!(
            sentence_runs(" (Hello there.) And more"),
            ["Hello there.", "And more"]
        );
    }
}
