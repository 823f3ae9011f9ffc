//! Punkt's sentence splitting (NLTK 3.9.1 `PunktSentenceTokenizer`), which `nltk.word_tokenize`
//! runs before tokenizing words, on small built-in parameters.
//!
//! Upstream splits with NLTK's trained English model, NLTK data this machine cannot fetch.
//! [`sent_tokenize`] is Punkt's decision procedure, exactly: candidate breaks after `.`, `?`,
//! `!`; Punkt's word tokens of each candidate's context; the first pass (sentence ends,
//! ellipses, known abbreviations) and the second (abbreviations and ellipses before a frequent
//! sentence starter, initials and numbers before a word that does not start a sentence);
//! closing quotes and brackets realigned onto the sentence they close. Its parameters are
//! ours: [`ABBREVIATIONS`] and [`SENTENCE_STARTERS`] stand in for the model's learned lists,
//! and there are no collocations and no orthographic statistics (Punkt then judges a
//! lower-case word or punctuation "not a sentence start" and anything else "unknown").

use std::sync::LazyLock;

use regex::Regex;

use super::pychars::{py_space, py_word, re};

/// Words (lower case, final period dropped) our Punkt run treats as abbreviations, standing in
/// for the English model's learned list: titles, company and month abbreviations it also
/// has. Words it does not have stay out even where they look like abbreviations (`e.g`,
/// `i.e`, `etc`): upstream's Punkt ends a sentence after them.
pub const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "ft", "vs", "gen", "lt", "col", "maj",
    "rep", "sen", "inc", "ltd", "co", "corp", "bros", "ave", "jan", "feb", "aug", "sep", "sept",
    "oct", "nov", "dec", "tues", "wed", "fri", "a.m", "p.m", "u.s", "u.k", "ph.d",
];

/// Capitalised words that start a sentence after an abbreviation or ellipsis (Punkt's
/// frequent-sentence-starter heuristic). Common function words, standing in for both the
/// English model's list and its orthographic statistics (which would call words like `She`
/// or `We` sentence starters there too).
pub const SENTENCE_STARTERS: &[&str] = &[
    "the", "a", "an", "he", "she", "it", "they", "we", "i", "you", "this", "these", "that",
    "those", "there", "but", "and", "so", "if", "in", "when", "while", "however", "then", "after",
    "as", "my", "his", "her", "their",
];

/// Punkt's characters that end a word token and may directly follow a sentence end.
fn non_word(c: char) -> bool {
    matches!(
        c,
        ')' | '"' | ';' | '}' | ']' | '*' | ':' | '@' | '\'' | '(' | '{' | '[' | '?' | '!'
    )
}

/// Punkt's multi-character punctuation at the start of `s` (`--…`, `..…`, `. . .`): its length.
fn multi_char(s: &str) -> Option<usize> {
    for c in ['-', '.'] {
        let run = s.len() - s.trim_start_matches(c).len();
        if run >= 2 {
            return Some(run);
        }
    }
    // `(?:\.\s){2,}\.`, backtracking one pair when the last is not followed by a period.
    let mut ends = vec![0];
    let mut chars = s.char_indices().peekable();
    while let (Some((_, '.')), Some(&(at, w))) = (chars.next(), chars.peek()) {
        if !py_space(w) {
            break;
        }
        chars.next();
        ends.push(at + w.len_utf8());
    }
    ends.iter()
        .skip(2)
        .rev()
        .find(|&&end| s[end..].starts_with('.'))
        .map(|end| end + 1)
}

/// Punkt's word tokens of one line (`PunktLanguageVars.word_tokenize`).
fn punkt_words(line: &str) -> Vec<&str> {
    let ends_word = |q: usize| {
        let rest = &line[q..];
        let mut next = rest.chars();
        match next.next() {
            None => true,
            Some(c) if py_space(c) || non_word(c) || multi_char(rest).is_some() => true,
            Some(',') => next
                .next()
                .is_none_or(|d| py_space(d) || non_word(d) || multi_char(&rest[1..]).is_some()),
            Some(_) => false,
        }
    };
    let mut words = Vec::new();
    let mut p = 0;
    while let Some(c) = line[p..].chars().next() {
        let end = if py_space(c) {
            p += c.len_utf8();
            continue;
        } else if let Some(n) = multi_char(&line[p..]) {
            p + n
        } else if "(\"`{[:;&#*@)}]-,".contains(c) {
            p + c.len_utf8()
        } else {
            let mut q = p + c.len_utf8();
            while !ends_word(q) {
                q += line[q..].chars().next().map_or(1, char::len_utf8);
            }
            q
        };
        words.push(&line[p..end]);
        p = end;
    }
    words
}

static DECIMAL: LazyLock<Regex> = LazyLock::new(|| re(r"^\d$"));
static NUMERIC: LazyLock<Regex> = LazyLock::new(|| re(r"^-?[.,]?\d[\d,.\-]*\.?$"));

/// A Punkt token's type: lower case, numbers as `##number##`; `drop_period` drops a final one.
fn punkt_type(token: &str, drop_period: bool) -> String {
    let lower = token.to_lowercase();
    let typ = if NUMERIC.is_match(&lower) {
        "##number##".to_string()
    } else {
        lower
    };
    match typ.strip_suffix('.') {
        Some(stripped) if drop_period && typ.chars().count() > 1 => stripped.to_string(),
        _ => typ,
    }
}

/// Punkt's `text_contains_sentbreak` on a candidate's context: its first and second passes
/// with our parameters; true when a token other than the last ends a sentence.
fn contains_break(context: &str) -> bool {
    let words: Vec<&str> = context.split('\n').flat_map(punkt_words).collect();
    // First pass: (sentence break, abbreviation or ellipsis).
    let mut marks: Vec<(bool, bool)> = words
        .iter()
        .map(|&w| {
            let abbreviation = |s: &str| ABBREVIATIONS.contains(&s);
            if matches!(w, "." | "?" | "!") {
                (true, false)
            } else if w.len() >= 2 && w.chars().all(|c| c == '.') {
                (false, true)
            } else if let Some(stem) = w.strip_suffix('.').filter(|_| !w.ends_with("..")) {
                let stem = stem.to_lowercase();
                let known =
                    abbreviation(&stem) || stem.rsplit('-').next().is_some_and(abbreviation);
                (!known, known)
            } else {
                (false, false)
            }
        })
        .collect();
    // Second pass, with no orthographic statistics: Punkt's heuristic then says "not a
    // sentence start" for punctuation and lower-case words, and "unknown" otherwise.
    for i in 0..words.len().saturating_sub(1) {
        let (word, next) = (words[i], words[i + 1]);
        if !word.ends_with('.') {
            continue;
        }
        let mut letters = word.chars();
        let initial = matches!((letters.next(), letters.as_str()), (Some(c), ".")
            if py_word(c) && !DECIMAL.is_match(c.encode_utf8(&mut [0; 4])));
        let first = next.chars().next();
        let upper = first.is_some_and(char::is_uppercase);
        let not_starter = matches!(next, ";" | ":" | "," | "." | "!" | "?")
            || first.is_some_and(char::is_lowercase);
        if marks[i].1 && !initial && upper {
            let next_type = punkt_type(next, marks[i + 1].0);
            if SENTENCE_STARTERS.contains(&next_type.as_str()) {
                marks[i].0 = true;
                continue;
            }
        }
        if (initial || punkt_type(word, true) == "##number##")
            && (not_starter || (initial && upper))
        {
            marks[i] = (false, true);
        }
    }
    marks
        .iter()
        .rev()
        .skip(1)
        .any(|&(sentence_break, _)| sentence_break)
}

/// `PunktSentenceTokenizer(params).tokenize(text)` with our parameters: candidate breaks
/// after `.`, `?`, `!` (the last of a run, before punctuation or a next token), Punkt's
/// decision on each, closing quotes and brackets realigned onto the sentence they close.
pub fn sent_tokenize(text: &str) -> Vec<&str> {
    // Candidates: (end of the break character, start of the next token if any, context).
    let mut candidates: Vec<(usize, Option<usize>, String)> = Vec::new();
    let (mut previous, mut previous_word) = (None::<(usize, Option<usize>, usize)>, 0..0);
    let flush = |previous: Option<(usize, Option<usize>, usize)>,
                 word: &std::ops::Range<usize>,
                 out: &mut Vec<(usize, Option<usize>, String)>| {
        if let Some((end, next, after_end)) = previous {
            out.push((
                end,
                next,
                format!("{}{}", &text[word.clone()], &text[end - 1..after_end]),
            ));
        }
    };
    let ends = text
        .char_indices()
        .filter(|(_, c)| matches!(c, '.' | '?' | '!'));
    for i in ends.map(|(i, _)| i) {
        let rest = &text[i + 1..];
        let after = match rest.chars().next() {
            Some(d) if non_word(d) => (None, i + 1 + d.len_utf8()),
            Some(d) if py_space(d) => {
                let token = rest.trim_start_matches(py_space);
                let start = text.len() - token.len();
                match token.find(py_space).unwrap_or(token.len()) {
                    0 => continue,
                    len => (Some(start), start + len),
                }
            }
            _ => continue,
        };
        // The word before: from the last ASCII whitespace since the previous word (a space
        // at that stretch's first position counts as none, as in NLTK), else that word's start.
        let before = &text[previous_word.end..i];
        let start = match before.rfind([' ', '\t', '\n', '\r', '\x0b', '\x0c']) {
            Some(at) if at > 0 => previous_word.end + at + 1,
            _ => previous_word.start,
        };
        if previous_word.end <= start {
            flush(previous, &previous_word, &mut candidates);
        }
        previous = Some((i + 1, after.0, after.1));
        previous_word = start..i;
    }
    flush(previous, &previous_word, &mut candidates);

    let mut slices = Vec::new();
    let mut last_break = 0;
    for (end, next, context) in candidates {
        if contains_break(&context) {
            slices.push((last_break, end));
            last_break = next.unwrap_or(end);
        }
    }
    slices.push((last_break, text.trim_end_matches(py_space).len()));

    // Realignment: closing quotes and brackets followed by whitespace, `--` or a line end
    // move to the end of the sentence before.
    let slice = |(start, end): (usize, usize)| &text[start.min(end)..end];
    let mut sentences = Vec::new();
    let mut realign = 0;
    for (k, &(start, end)) in slices.iter().enumerate() {
        let first = (start + realign, end);
        let Some(&second) = slices.get(k + 1) else {
            if !slice(first).is_empty() {
                sentences.push(slice(first));
            }
            break;
        };
        let following = slice(second);
        let closers = following.len()
            - following
                .trim_start_matches(['"', '\'', ')', ']', '}'])
                .len();
        let aligned = (1..=closers).find(|&n| {
            let rest = &following[n..];
            rest.is_empty() || rest.starts_with(py_space) || rest.starts_with("--")
        });
        if let Some(n) = aligned {
            let rest = &following[n..];
            sentences.push(slice((first.0, second.0 + n)));
            realign = n + rest.len() - rest.trim_start_matches(py_space).len();
        } else {
            realign = 0;
            if !slice(first).is_empty() {
                sentences.push(slice(first));
            }
        }
    }
    sentences
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        sent_tokenize(text)
    }

    #[test]
    fn abbreviations_and_starters() {
        // A title keeps its period; a known abbreviation before a frequent starter does not.
        assert_eq!(
            split("Dr. Smith met Mr. Jones. They talked."),
            ["Dr. Smith met Mr. Jones.", "They talked."]
        );
        assert_eq!(
            split("Call me at 5 p.m. The office closes then."),
            ["Call me at 5 p.m.", "The office closes then."]
        );
        // Not in the list (nor in NLTK's English model): a break, as upstream.
        assert_eq!(
            split("Use a tool, e.g. a hammer. Or not."),
            ["Use a tool, e.g.", "a hammer.", "Or not."]
        );
        assert_eq!(
            split("Wait... Then we left... and came back."),
            ["Wait...", "Then we left... and came back."]
        );
    }

    #[test]
    fn numbers_and_initials() {
        // A number ends a sentence unless a lower-case word follows; an initial before a
        // capitalised word does not, before a quote it does.
        assert_eq!(
            split("It cost 41. She paid. In 2019. we moved."),
            ["It cost 41.", "She paid.", "In 2019. we moved."]
        );
        assert_eq!(
            split("J. K. Rowling wrote it. Plan B. \"Go\" now."),
            ["J. K. Rowling wrote it.", "Plan B.", "\"Go\" now."]
        );
    }

    #[test]
    fn closing_punctuation_and_whitespace() {
        // Closers followed by a space move back to their sentence; before a comma they do
        // not (upstream's `", she asked.` sentence); runs of marks break once, after the last.
        assert_eq!(
            split("He left.\" She stayed. (Really.) Fine."),
            ["He left.\"", "She stayed.", "(Really.)", "Fine."]
        );
        assert_eq!(
            split("Is it?\", she asked. Yes!!! No?! Maybe"),
            ["Is it?", "\", she asked.", "Yes!!!", "No?!", "Maybe"]
        );
        // Leading whitespace stays on the first sentence, trailing whitespace goes.
        assert_eq!(
            split("  Leading space. Trailing space.   "),
            ["  Leading space.", "Trailing space."]
        );
        assert_eq!(
            split("The end.\n\n\"New paragraph.\" Done."),
            ["The end.", "\"New paragraph.\"", "Done."]
        );
        assert!(split("").is_empty() && split(" \n ").is_empty());
        assert_eq!(split("no punctuation"), ["no punctuation"]);
    }

    #[test]
    fn punkt_word_tokens() {
        assert_eq!(
            punkt_words("\"Hi,\" said Dr. O'Neil... (twice)-- a . . . b"),
            [
                "\"", "Hi", ",", "\"", "said", "Dr.", "O", "'Neil", "...", "(", "twice", ")", "--",
                "a", ". . .", "b"
            ]
        );
        assert_eq!(multi_char(". . . ."), Some(7));
        assert_eq!(multi_char(". . x"), None);
        assert_eq!(multi_char(". . . x"), Some(5));
    }
}
