//! NLTK's word tokenizer, as MemoryBench's METEOR and HelloBench scoring call it.
//!
//! Upstream calls `nltk.word_tokenize`: Punkt sentence splitting with NLTK's trained English
//! model, then `NLTKWordTokenizer().tokenize` on each sentence. [`treebank_tokenize`]
//! reproduces the latter exactly (its regular expressions in NLTK's order; the few lookarounds
//! Python's `re` has and Rust's `regex` lacks are emulated). The Punkt model is NLTK data that
//! cannot be fetched here, so [`word_tokenize`] splits sentences with a small rule of ours:
//! after `.`, `?` or `!` (and closing quotes or brackets) followed by whitespace and an
//! upper-case letter, digit or opening quote, unless the word is a common abbreviation. What
//! that changes: only sentence boundaries Punkt would judge differently (rare abbreviations,
//! lower-case sentence starts) keep their period attached to the word before.

use std::sync::LazyLock;

use regex::{Captures, Regex};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|_| unreachable!("tokenizer patterns are valid"))
}

/// A substitution step: pattern and replacement (in `regex`'s `${n}` syntax).
struct Step(Regex, &'static str);

static STARTING_QUOTES: LazyLock<Vec<Step>> = LazyLock::new(|| {
    vec![
        Step(re("([«“‘„]|[`]+)"), " ${1} "),
        Step(re(r#"^""#), "``"),
        Step(re("(``)"), " ${1} "),
        Step(re(r#"([ (\[{<])("|'{2})"#), "${1} `` "),
    ]
});

/// `(?i)(')(?!re|ve|ll|m|t|s|d|n)(\w)\b`: as `(\w)\b` is a single character ending a word,
/// the lookahead only forbids `m, t, s, d, n` (any case) there.
static QUOTE_BEFORE_LETTER: LazyLock<Regex> = LazyLock::new(|| re(r"(')(\w)\b"));

static PUNCTUATION: LazyLock<Vec<Step>> = LazyLock::new(|| {
    vec![
        Step(re(r#"([^.])(\.)([\])}>"'»”’ ]*)\s*$"#), "${1} ${2} ${3} "),
        Step(re(r"([:,])([^\d])"), " ${1} ${2}"),
        // Python's `$` also matches before a final newline.
        Step(re(r"([:,])(\n?)$"), " ${1} ${2}"),
        Step(re(r"\.{2,}"), " ${0} "),
        Step(re(r"[;@#$%&]"), " ${0} "),
        Step(re(r#"([^.])(\.)([\])}>"']*)\s*$"#), "${1} ${2}${3} "),
        Step(re(r"[?!]"), " ${0} "),
        Step(re(r"([^'])' "), "${1} ' "),
        Step(re(r"[*]"), " ${0} "),
        Step(re(r"[\]\[(){}<>]"), " ${0} "),
        Step(re(r"--"), " -- "),
    ]
});

static ENDING_QUOTES: LazyLock<Vec<Step>> = LazyLock::new(|| {
    vec![
        Step(re("([»”’])"), " ${1} "),
        Step(re("''"), " '' "),
        Step(re(r#"""#), " '' "),
        Step(re(r"\s+"), " "),
        Step(re(r"([^' ])('[sS]|'[mM]|'[dD]|') "), "${1} ${2} "),
        Step(
            re(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "),
            "${1} ${2} ",
        ),
    ]
});

static CONTRACTIONS: LazyLock<Vec<Step>> = LazyLock::new(|| {
    vec![
        Step(re(r"(?i)\b(can)(not)\b"), " ${1} ${2} "),
        Step(re(r"(?i)\b(d)('ye)\b"), " ${1} ${2} "),
        Step(re(r"(?i)\b(gim)(me)\b"), " ${1} ${2} "),
        Step(re(r"(?i)\b(gon)(na)\b"), " ${1} ${2} "),
        Step(re(r"(?i)\b(got)(ta)\b"), " ${1} ${2} "),
        Step(re(r"(?i)\b(lem)(me)\b"), " ${1} ${2} "),
        Step(re(r"(?i)\b(more)('n)\b"), " ${1} ${2} "),
        // `(?=\s)`: the whitespace is matched and put back.
        Step(re(r"(?i)\b(wan)(na)(\s)"), " ${1} ${2} ${3}"),
        Step(re(r"(?i) ('t)(is)\b"), " ${1} ${2} "),
        Step(re(r"(?i) ('t)(was)\b"), " ${1} ${2} "),
    ]
});

fn apply(steps: &[Step], mut text: String) -> String {
    for Step(pattern, replacement) in steps {
        if pattern.is_match(&text) {
            text = pattern.replace_all(&text, *replacement).into_owned();
        }
    }
    text
}

/// NLTK's `NLTKWordTokenizer().tokenize(text)` (no parenthesis conversion), for one sentence.
pub fn treebank_tokenize(text: &str) -> Vec<String> {
    let text = apply(&STARTING_QUOTES, text.to_string());
    let text = QUOTE_BEFORE_LETTER
        .replace_all(&text, |c: &Captures| {
            let letter = &c[2];
            if matches!(
                letter,
                "m" | "t" | "s" | "d" | "n" | "M" | "T" | "S" | "D" | "N"
            ) {
                c[0].to_string()
            } else {
                format!("{} {letter}", &c[1])
            }
        })
        .into_owned();
    let text = apply(&PUNCTUATION, text);
    let text = apply(&ENDING_QUOTES, format!(" {text} "));
    let text = apply(&CONTRACTIONS, text);
    text.split(python_space)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Python's `str.split()` separators (Unicode whitespace plus the ASCII separators
/// `\x1c`–`\x1f`).
fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Words that end with a period without ending a sentence.
const ABBREVIATIONS: [&str; 24] = [
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd",
    "co", "corp", "mt", "no", "fig", "jan", "feb", "aug", "sept", "oct",
];

/// `nltk.word_tokenize`: sentences (by the rule in the module documentation), each tokenized
/// by [`treebank_tokenize`].
pub fn word_tokenize(text: &str) -> Vec<String> {
    sentences(text)
        .iter()
        .flat_map(|s| treebank_tokenize(s))
        .collect()
}

/// Splits `text` into sentences at `.`, `?` or `!` (with closing quotes or brackets) followed
/// by whitespace and a likely sentence start.
fn sentences(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let (_, c) = chars[i];
        if matches!(c, '.' | '?' | '!') {
            let mut end = i + 1;
            while end < chars.len()
                && matches!(
                    chars[end].1,
                    '"' | '\'' | ')' | ']' | '”' | '’' | '.' | '?' | '!'
                )
            {
                end += 1;
            }
            let mut next = end;
            while next < chars.len() && chars[next].1.is_whitespace() {
                next += 1;
            }
            let starts_sentence = next > end
                && next < chars.len()
                && (chars[next].1.is_uppercase()
                    || chars[next].1.is_ascii_digit()
                    || matches!(chars[next].1, '"' | '“' | '\'' | '‘' | '('));
            if starts_sentence && !(c == '.' && is_abbreviation(text, start, chars[i].0)) {
                let cut = chars.get(end).map_or(text.len(), |&(at, _)| at);
                out.push(text[start..cut].trim());
                start = chars[next].0;
                i = next;
                continue;
            }
        }
        i += 1;
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Whether the word ending at byte `period` (exclusive) is an abbreviation or an initial.
fn is_abbreviation(text: &str, start: usize, period: usize) -> bool {
    let word = text[start..period]
        .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '"')
        .next()
        .unwrap_or_default();
    let lower = word.to_lowercase();
    (word.chars().count() == 1 && word.chars().all(char::is_alphabetic))
        || ABBREVIATIONS.contains(&lower.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        treebank_tokenize(text)
    }

    #[test]
    fn nltk_doctest_sentence() {
        // NLTK's own example for NLTKWordTokenizer.tokenize.
        let text = "Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\ntwo of them.\nThanks.";
        assert_eq!(
            tokens(text),
            [
                "Good", "muffins", "cost", "$", "3.88", "(", "roughly", "3,36", "euros", ")", "in",
                "New", "York.", "Please", "buy", "me", "two", "of", "them.", "Thanks", "."
            ]
        );
    }

    #[test]
    fn contractions_quotes_and_dashes() {
        assert_eq!(
            tokens("I can't believe I'm gonna do it."),
            ["I", "ca", "n't", "believe", "I", "'m", "gon", "na", "do", "it", "."]
        );
        assert_eq!(
            tokens("\"Hello,\" she said -- twice..."),
            ["``", "Hello", ",", "''", "she", "said", "--", "twice", "..."]
        );
        assert_eq!(tokens("Cannot wanna go"), ["Can", "not", "wan", "na", "go"]);
        assert_eq!(
            tokens("'Twas the night; 'x' marks 1,000 spots!"),
            ["'T", "was", "the", "night", ";", "'", "x", "'", "marks", "1,000", "spots", "!"]
        );
        assert_eq!(
            tokens("end with a comma,\n"),
            ["end", "with", "a", "comma", ","]
        );
    }

    #[test]
    fn sentences_split_at_likely_boundaries_only() {
        assert_eq!(
            word_tokenize("Dr. Okafor runs the team. She is 41. Really? Yes."),
            [
                "Dr.", "Okafor", "runs", "the", "team", ".", "She", "is", "41", ".", "Really", "?",
                "Yes", "."
            ]
        );
        // A lower-case continuation is not a new sentence: the period stays on its word.
        assert_eq!(
            word_tokenize("It costs 3.5 dollars. done"),
            ["It", "costs", "3.5", "dollars.", "done"]
        );
        assert!(word_tokenize("   ").is_empty());
    }
}
