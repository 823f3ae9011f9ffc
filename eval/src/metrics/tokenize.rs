//! NLTK's word tokenizer (3.9.1), as MemoryBench's METEOR and HelloBench scoring call it.
//!
//! Upstream calls `nltk.word_tokenize`: Punkt splits the text into sentences with NLTK's
//! trained English model, then `NLTKWordTokenizer().tokenize` splits each sentence.
//! [`treebank_tokenize`] is the second step, exactly: NLTK's substitutions in its order
//! (starting quotes, punctuation, brackets, double dashes, then ending quotes and
//! contractions), with Python's `\s`, `\w`, `\b`, `$` and case folding, and the lookarounds
//! `regex` lacks checked by hand. The first step, [`sent_tokenize`], is Punkt's algorithm on
//! small built-in parameters (see [`super::punkt`]): the trained model is NLTK data this
//! machine cannot fetch.
//!
//! What that changes, measured on the 4,805 LoCoMo turns and 547 HelloBench instructions of
//! `../shared/data` against Punkt with the English model's abbreviations, collocations and
//! sentence starters (its orthographic table was not available): [`word_tokenize`] gives the
//! same tokens on 99.8% of the texts, and the same METEOR on all but 7 of 4,804 pairs of
//! neighbouring turns; the rest differ where the model knows an abbreviation or collocation
//! we do not (`J.K. Rowling`, `ok.`, `4. Who`), or where its orthographic statistics decide
//! about the word after an abbreviation, initial, number or ellipsis. Tokenizing each text as
//! one sentence instead, without splitting, gives the same tokens on 30% of them only: every
//! period ending a sentence inside a text then stays on its word (`done.`, and `didn't.`
//! unsplit), and a `"` opening a sentence after a line break becomes `''`; METEOR of
//! neighbouring turns then changes for 85% of the pairs (by 0.018 on average, up to 0.23).

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// Punkt's sentence splitting, the first step of [`word_tokenize`], beside it for callers.
pub use super::punkt::sent_tokenize;
use super::pychars::{py_space, py_word, re};

/// The lookaround a step's pattern has in NLTK, checked around each match.
#[derive(Clone, Copy)]
enum Guard {
    None,
    /// `\b` on both sides (the match starts and ends with a word character).
    Bounded,
    /// `\b` after the match.
    BoundedAfter,
    /// `\b` before the match and `(?=\s)` after it.
    BoundedSpaceAfter,
    /// `(?i)(?!re|ve|ll|m|t|s|d|n)` after the quote and `\b` after the letter: with one letter
    /// before a boundary, only `m t s d n` (any case, and `ſ` for `s`) can be refused.
    QuoteLetter,
}

impl Guard {
    fn allows(self, text: &str, caps: &Captures) -> bool {
        let Some(whole) = caps.get(0) else {
            return false;
        };
        let word_before = text[..whole.start()]
            .chars()
            .next_back()
            .is_some_and(py_word);
        let after = text[whole.end()..].chars().next();
        let word_after = after.is_some_and(py_word);
        match self {
            Guard::None => true,
            Guard::Bounded => !word_before && !word_after,
            Guard::BoundedAfter => !word_after,
            Guard::BoundedSpaceAfter => !word_before && after.is_some_and(py_space),
            Guard::QuoteLetter => {
                let letter = caps.get(2).and_then(|m| m.as_str().chars().next());
                let refused = matches!(
                    letter,
                    Some('m' | 'M' | 't' | 'T' | 's' | 'S' | 'ſ' | 'd' | 'D' | 'n' | 'N')
                );
                !word_after && !refused
            }
        }
    }
}

/// One of NLTK's substitutions: pattern, replacement (`regex`'s `${n}` syntax), lookaround.
struct Step(Regex, &'static str, Guard);

fn step(pattern: &str, replacement: &'static str) -> Step {
    Step(re(pattern), replacement, Guard::None)
}

/// Python `re.sub` of one step: a match its guard refuses is retried one character later, as
/// a lookaround failing there would make Python's search do (every pattern here matches at
/// most one way from a given start).
fn substitute(Step(pattern, replacement, guard): &Step, text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let (mut copied, mut at) = (0, 0);
    while let Some(caps) = pattern.captures_at(text, at) {
        let Some(whole) = caps.get(0) else { break };
        let next = text[whole.start()..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        if guard.allows(text, &caps) {
            out.push_str(&text[copied..whole.start()]);
            caps.expand(replacement, &mut out);
            copied = whole.end();
            at = whole.end().max(whole.start() + next);
        } else {
            at = whole.start() + next;
        }
        if at > text.len() {
            break;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// `NLTKWordTokenizer`'s substitutions in its order: starting quotes, punctuation, brackets,
/// double dashes, then (on the text padded with spaces) ending quotes and contractions.
static STEPS: LazyLock<(Vec<Step>, Vec<Step>)> = LazyLock::new(|| {
    let s = r"[\s\x1C-\x1F]";
    let before_padding = vec![
        step("([«“‘„]|[`]+)", " ${1} "),
        step(r#"^""#, "``"),
        step("(``)", " ${1} "),
        step(r#"([ (\[{<])("|'{2})"#, "${1} `` "),
        Step(re(r"(')([\p{L}\p{N}_])"), "${1} ${2}", Guard::QuoteLetter),
        step(
            &format!(r#"([^.])(\.)([\])}}>"'»”’ ]*){s}*$"#),
            "${1} ${2} ${3} ",
        ),
        step(r"([:,])([^\d])", " ${1} ${2}"),
        // Python's `$` also matches before a final newline.
        step(r"([:,])(\n?)$", " ${1} ${2}"),
        step(r"\.{2,}", " ${0} "),
        step(r"[;@#$%&]", " ${0} "),
        step(
            &format!(r#"([^.])(\.)([\])}}>"']*){s}*$"#),
            "${1} ${2}${3} ",
        ),
        step(r"[?!]", " ${0} "),
        step(r"([^'])' ", "${1} ' "),
        step(r"[*]", " ${0} "),
        step(r"[\]\[(){}<>]", " ${0} "),
        step("--", " -- "),
    ];
    // Python's `(?i)` also folds `İ` and `ı` onto `i`, which `regex` does not.
    let contraction = |pattern: &str, guard| {
        let pattern = format!("(?i){}", pattern.replace('i', "[iİı]"));
        Step(re(&pattern), " ${1} ${2} ", guard)
    };
    let after_padding = vec![
        step("([»”’])", " ${1} "),
        step("''", " '' "),
        step(r#"""#, " '' "),
        step(&format!("{s}+"), " "),
        step(r"([^' ])('[sS]|'[mM]|'[dD]|') ", "${1} ${2} "),
        step(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "${1} ${2} "),
        contraction(r"(can)(not)", Guard::Bounded),
        contraction(r"(d)('ye)", Guard::Bounded),
        contraction(r"(gim)(me)", Guard::Bounded),
        contraction(r"(gon)(na)", Guard::Bounded),
        contraction(r"(got)(ta)", Guard::Bounded),
        contraction(r"(lem)(me)", Guard::Bounded),
        contraction(r"(more)('n)", Guard::Bounded),
        contraction(r"(wan)(na)", Guard::BoundedSpaceAfter),
        contraction(r" ('t)(is)", Guard::BoundedAfter),
        contraction(r" ('t)(was)", Guard::BoundedAfter),
    ];
    (before_padding, after_padding)
});

/// `NLTKWordTokenizer().tokenize(text)` (parentheses not converted): the text as one sentence.
/// Exposed for callers that split sentences themselves and for the parity test.
pub fn treebank_tokenize(text: &str) -> Vec<String> {
    let (before_padding, after_padding) = &*STEPS;
    let text = before_padding
        .iter()
        .fold(text.to_string(), |t, s| substitute(s, &t));
    let text = after_padding
        .iter()
        .fold(format!(" {text} "), |t, s| substitute(s, &t));
    text.split(py_space)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// `nltk.word_tokenize(text)`: [`sent_tokenize`], then [`treebank_tokenize`] on each sentence.
/// Used by METEOR (WritingPrompts) and to re-tokenise HelloBench responses.
pub fn word_tokenize(text: &str) -> Vec<String> {
    sent_tokenize(text)
        .into_iter()
        .flat_map(treebank_tokenize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        treebank_tokenize(text)
    }

    #[test]
    fn nltk_doctest_sentence() {
        // NLTK's own example: periods inside the text stay on their words when the tokenizer
        // is given several sentences at once.
        let text = "Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\ntwo of them.\nThanks.";
        let expected = "Good muffins cost $ 3.88 ( roughly 3,36 euros ) in New York. Please buy me two of them. Thanks .";
        assert_eq!(tokens(text), expected.split(' ').collect::<Vec<_>>());
        let expected = "Good muffins cost $ 3.88 ( roughly 3,36 euros ) in New York . Please buy me two of them . Thanks .";
        assert_eq!(word_tokenize(text), expected.split(' ').collect::<Vec<_>>());
    }

    #[test]
    fn contractions() {
        assert_eq!(
            tokens("I can't believe I'm gonna do it"),
            ["I", "ca", "n't", "believe", "I", "'m", "gon", "na", "do", "it"]
        );
        assert_eq!(
            tokens("Cannot wanna gimme lemme gotta more'n d'ye"),
            [
                "Can", "not", "wan", "na", "gim", "me", "lem", "me", "got", "ta", "more", "'n",
                "d", "'ye"
            ]
        );
        // `\b` around the contraction and `(?=\s)` after `wanna`: no split inside words (the
        // final period is split off first, so `wanna` is followed by a space).
        assert_eq!(
            tokens("scannot gonnas wannabe wanna."),
            ["scannot", "gonnas", "wannabe", "wan", "na", "."]
        );
        assert_eq!(tokens("'Tis and 'twas"), ["'T", "is", "and", "'t", "was"]);
        // Python's case folding: `i` also matches `İ` and `ı`, `s` also `ſ`.
        assert_eq!(tokens("gİmme 'tıſ"), ["gİm", "me", "'t", "ıſ"]);
        assert_eq!(
            tokens("they'll we've she's"),
            ["they", "'ll", "we", "'ve", "she", "'s"]
        );
    }

    #[test]
    fn quotes() {
        assert_eq!(
            tokens("\"Hello,\" she said. \"Bye\""),
            ["``", "Hello", ",", "''", "she", "said.", "``", "Bye", "''"]
        );
        assert_eq!(
            tokens("“Curly” ‘single’"),
            ["“", "Curly", "”", "‘", "single", "’"]
        );
        // `(?!re|ve|ll|m|t|s|d|n)`: a quote before another lone letter is split off.
        assert_eq!(tokens("'x' 'm' 'ſ'"), ["'", "x", "'", "'m", "'", "'ſ", "'"]);
        assert_eq!(tokens("the dogs' bone"), ["the", "dogs", "'", "bone"]);
        assert_eq!(
            tokens("\nQuoted \"after\nnewline\""),
            ["Quoted", "``", "after", "newline", "''"]
        );
    }

    #[test]
    fn punctuation() {
        assert_eq!(tokens("The end."), ["The", "end", "."]);
        assert_eq!(
            tokens("(see above) [1] {x} <y>"),
            ["(", "see", "above", ")", "[", "1", "]", "{", "x", "}", "<", "y", ">"]
        );
        assert_eq!(tokens("Wait... what?!"), ["Wait", "...", "what", "?", "!"]);
        assert_eq!(
            tokens("so--called -- dash"),
            ["so", "--", "called", "--", "dash"]
        );
        assert_eq!(
            tokens("1,000,000 and 3,5: 12:30, a:b"),
            ["1,000,000", "and", "3,5", ":", "12:30", ",", "a", ":", "b"]
        );
        assert_eq!(
            tokens("$5 & 50% @home #1; *"),
            ["$", "5", "&", "50", "%", "@", "home", "#", "1", ";", "*"]
        );
        assert_eq!(
            tokens("end with a comma,\n"),
            ["end", "with", "a", "comma", ","]
        );
        assert_eq!(tokens("a.\u{1f}b"), ["a.", "b"]);
        assert!(tokens(" \t\n").is_empty());
    }

    #[test]
    fn sentences_then_words() {
        assert_eq!(
            word_tokenize("Dr. Okafor runs it. She is 41. Really? Yes.\n\"No.\""),
            [
                "Dr.", "Okafor", "runs", "it", ".", "She", "is", "41", ".", "Really", "?", "Yes",
                ".", "``", "No", ".", "''"
            ]
        );
        assert_eq!(
            word_tokenize("I didn't. ok"),
            ["I", "did", "n't", ".", "ok"]
        );
        assert!(word_tokenize("").is_empty());
    }
}
