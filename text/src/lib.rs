//! `mb-text`: text to index terms, the one definition shared by the engine's lexical index and
//! the offline memory operations.
//!
//! The same analyzer turns record texts into indexed terms, queries into query terms and feeds
//! the per-namespace BM25 statistics, so all three always agree; the offline operations use it
//! to pick content words exactly as search sees them. Queries are never parsed as query syntax
//! here: `AND`, quotes or `field:` are just text.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub mod porter;

/// Longest term kept, in bytes (tantivy's `MAX_TOKEN_LEN`; the engine checks they agree).
pub const MAX_TOKEN_LEN: usize = u16::MAX as usize - 5;

/// Which text analyzer a namespace's lexical index (and an offline operation) uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Analyzer {
    /// Whoosh `StandardAnalyzer` parity: tokens `\w+(\.?\w+)*`, lowercased, English stop words
    /// and tokens shorter than two characters removed. The MemoryBench default.
    #[default]
    Standard,
    /// Chinese-aware: jieba word segmentation (search mode, which adds the words inside
    /// compounds), then the same lowercasing and stop words; single
    /// CJK characters are kept because they are words.
    Cjk,
    /// [`Standard`](Self::Standard) with every term reduced to its Porter stem (NLTK's
    /// variant), so `painted` finds `painting`: Whoosh's `StemmingAnalyzer`. Not upstream's
    /// default; the hybrid memory indexes with it.
    Stemmed,
}

/// Whoosh's `STOP_WORDS` (the English list used by `StandardAnalyzer`), sorted for binary search.
const ENGLISH_STOP_WORDS: [&str; 34] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "for", "from", "have", "if", "in",
    "is", "it", "may", "not", "of", "on", "or", "tbd", "that", "the", "this", "to", "us", "we",
    "when", "will", "with", "yet", "you", "your",
];

/// Chinese function words dropped by the CJK analyzer in addition to the English list.
const CHINESE_STOP_WORDS: [&str; 3] = ["的", "了", "和"];

/// Bytes of the longest stop word of either list.
const LONGEST_STOP_WORD: usize = 4;

/// Tokens shorter than this many characters are dropped (Whoosh `StopFilter(minsize=2)`),
/// except CJK words in the CJK analyzer.
const MIN_TOKEN_CHARS: usize = 2;

/// One analyzed term with its byte span in the source text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// Normalized term text.
    pub text: String,
    /// Byte offset of the start of the source span.
    pub start: usize,
    /// Byte offset one past the end of the source span.
    pub end: usize,
}

impl Analyzer {
    /// Every analyzer, so an index can prepare a field for each.
    pub const ALL: [Analyzer; 3] = [Analyzer::Standard, Analyzer::Cjk, Analyzer::Stemmed];

    /// Splits `text` into index terms.
    pub fn analyze(self, text: &str) -> Vec<Term> {
        let mut out = Vec::new();
        match self {
            Analyzer::Standard => standard_terms(text, 0, &mut out),
            Analyzer::Cjk => cjk_terms(text, &mut out),
            Analyzer::Stemmed => {
                standard_terms(text, 0, &mut out);
                for term in &mut out {
                    term.text = porter::stem(&term.text);
                }
            }
        }
        out
    }

    /// Calls `visit` with the text of every term [`analyze`](Self::analyze) returns, in the
    /// same order, without building a `String` per term where it can (the standard analyzer
    /// lowercases into one reused buffer): for callers that only count terms, such as the
    /// BM25 statistics of deleted records.
    pub fn for_each_term(self, text: &str, mut visit: impl FnMut(&str)) {
        match self {
            Analyzer::Standard => standard_kept(text, 0, |term, _, _| visit(term)),
            Analyzer::Stemmed => standard_kept(text, 0, |term, _, _| visit(&porter::stem(term))),
            Analyzer::Cjk => {
                for term in self.analyze(text) {
                    visit(&term.text);
                }
            }
        }
    }

    /// A lowercased token as this analyzer indexes it (its stem for
    /// [`Stemmed`](Self::Stemmed)), for query terms built outside [`analyze`](Self::analyze).
    pub fn normalize(self, lower: String) -> String {
        match self {
            Analyzer::Stemmed => porter::stem(&lower),
            Analyzer::Standard | Analyzer::Cjk => lower,
        }
    }

    /// The lowercased Whoosh-standard tokens of `text` (`\w+(\.?\w+)*`), nothing removed:
    /// what a query term analyzed without its stop filter becomes.
    pub fn lowercase_tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        standard_spans(text, |start, end| out.push(text[start..end].to_lowercase()));
        out
    }

    /// Whether a lowercased token survives the stop filter (not a stop word, at least two
    /// characters), as a whole-text query term must.
    pub fn keeps_token(lower: &str) -> bool {
        keeps(lower, false)
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_stop_word(term: &str) -> bool {
    // Most terms are longer than every stop word and skip the search; the rest compare
    // numbers, not strings (string comparisons had been a sixth of a filtered delete's time:
    // docs/stores-history.md).
    term.len() <= LONGEST_STOP_WORD && STOP_KEYS.binary_search(&packed(term.as_bytes())).is_ok()
}

/// Number of stop words in both lists.
const STOP_WORDS: usize = ENGLISH_STOP_WORDS.len() + CHINESE_STOP_WORDS.len();

/// Every stop word of both lists as its [`packed`] number, in ascending order.
const STOP_KEYS: [u64; STOP_WORDS] = stop_keys();

/// A term of at most [`LONGEST_STOP_WORD`] bytes as one number: its bytes from the most
/// significant end, then its length, so that two such terms have the same number only when
/// they are the same term.
const fn packed(term: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut i = 0;
    while i < LONGEST_STOP_WORD {
        key <<= 8;
        if i < term.len() {
            key |= term[i] as u64;
        }
        i += 1;
    }
    (key << 8) | term.len() as u64
}

/// [`STOP_KEYS`], computed at compile time: both lists packed, then sorted.
const fn stop_keys() -> [u64; STOP_WORDS] {
    let mut keys = [0u64; STOP_WORDS];
    let mut i = 0;
    while i < STOP_WORDS {
        keys[i] = match i < ENGLISH_STOP_WORDS.len() {
            true => packed(ENGLISH_STOP_WORDS[i].as_bytes()),
            false => packed(CHINESE_STOP_WORDS[i - ENGLISH_STOP_WORDS.len()].as_bytes()),
        };
        let mut j = i;
        while j > 0 && keys[j - 1] > keys[j] {
            let swapped = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = swapped;
            j -= 1;
        }
        i += 1;
    }
    keys
}

/// Pushes the Whoosh-standard terms of `text` (offsets shifted by `base`).
fn standard_terms(text: &str, base: usize, out: &mut Vec<Term>) {
    standard_kept(text, base, |term, start, end| {
        out.push(Term {
            text: term.to_string(),
            start,
            end,
        })
    });
}

/// Calls `visit` with every lowercased Whoosh-standard token of `text` that the stop filter
/// keeps, and its span (shifted by `base`), each lowercased into one reused buffer.
fn standard_kept(text: &str, base: usize, mut visit: impl FnMut(&str, usize, usize)) {
    let mut lower = String::new();
    standard_spans(text, |start, end| {
        if lowercase_kept(&text[start..end], false, &mut lower) {
            visit(&lower, base + start, base + end)
        }
    });
}

/// Calls `found` with the byte span of every Whoosh-standard token (`\w+(\.?\w+)*`) of `text`.
/// Walks bytes, decoding a character only where one is not ASCII (most text is).
fn standard_spans(text: &str, mut found: impl FnMut(usize, usize)) {
    let len = text.len();
    let mut i = 0;
    while i < len {
        let (word, width) = word_char_at(text, i);
        i += width;
        if !word {
            continue;
        }
        // `\w+(\.?\w+)*`: word characters, optionally joined by single dots.
        let start = i - width;
        let mut end = i;
        while i < len {
            let (word, width) = word_char_at(text, i);
            if word {
                i += width;
                end = i;
            } else if text.as_bytes()[i] == b'.' && i + 1 < len && word_char_at(text, i + 1).0 {
                i += 1;
                end = i;
            } else {
                break;
            }
        }
        found(start, end);
    }
}

/// Whether the character at byte `i` of `text` (a character boundary) is a word character,
/// and its width in bytes.
#[inline]
fn word_char_at(text: &str, i: usize) -> (bool, usize) {
    let byte = text.as_bytes()[i];
    if byte.is_ascii() {
        return (byte.is_ascii_alphanumeric() || byte == b'_', 1);
    }
    match text[i..].chars().next() {
        Some(c) => (is_word_char(c), c.len_utf8()),
        None => (false, 1),
    }
}

/// Whether a lowercased token survives the stop filter (stop list, minimum length).
fn keeps(lower: &str, keep_short: bool) -> bool {
    (keep_short || lower.chars().nth(MIN_TOKEN_CHARS - 1).is_some()) && !is_stop_word(lower)
}

/// Lowercases `raw` into `lower` and says whether the stop filter and the length limit keep it.
fn lowercase_kept(raw: &str, keep_short: bool, lower: &mut String) -> bool {
    lower.clear();
    if raw.is_ascii() {
        lower.push_str(raw);
        lower.make_ascii_lowercase();
    } else {
        // `str::to_lowercase` knows context (a final sigma), which a per-character map does not.
        lower.push_str(&raw.to_lowercase());
    }
    keeps(lower, keep_short) && lower.len() <= MAX_TOKEN_LEN
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F
        | 0x3040..=0x30FF | 0xAC00..=0xD7AF)
}

fn jieba() -> &'static jieba_rs::Jieba {
    static JIEBA: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    JIEBA.get_or_init(jieba_rs::Jieba::new)
}

fn cjk_terms(text: &str, out: &mut Vec<Term>) {
    let mut lower = String::new();
    // Search mode also emits the dictionary words inside long compounds (合同纠纷 gives 合同,
    // 纠纷 and 合同纠纷), so a query word matches the compounds that contain it.
    for token in jieba().cut_for_search(text, true) {
        if token.word.chars().any(is_cjk) {
            let word: String = token.word.chars().filter(|c| is_word_char(*c)).collect();
            if !word.is_empty() && lowercase_kept(&word, true, &mut lower) {
                out.push(Term {
                    text: lower.clone(),
                    start: token.byte_start,
                    end: token.byte_end,
                });
            }
        } else {
            standard_terms(token.word, token.byte_start, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(a: Analyzer, s: &str) -> Vec<String> {
        a.analyze(s).into_iter().map(|t| t.text).collect()
    }

    /// `\w+(\.?\w+)*` spans found character by character: the oracle for the byte walk.
    fn spans_by_chars(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut chars = text.char_indices().peekable();
        while let Some((start, c)) = chars.next() {
            if !is_word_char(c) {
                continue;
            }
            let mut end = start + c.len_utf8();
            loop {
                match chars.peek().copied() {
                    Some((i, c)) if is_word_char(c) => {
                        end = i + c.len_utf8();
                        chars.next();
                    }
                    Some((i, '.')) if text[i + 1..].chars().next().is_some_and(is_word_char) => {
                        end = i + 1;
                        chars.next();
                    }
                    _ => break,
                }
            }
            out.push((start, end));
        }
        out
    }

    #[test]
    fn byte_walk_finds_the_spans_a_character_walk_does() {
        // Word characters of one to four bytes, a combining mark (not a word character),
        // dots, separators: every string of up to five of them, then longer mixes.
        let alphabet = [
            'a', 'Z', '7', '_', '.', ' ', ',', 'é', 'Σ', '北', '\u{301}', '٣', '𝔸',
        ];
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.chars().count() == texts.last().map_or(0, |l| l.chars().count()))
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longer);
        }
        let mut state = 7u64;
        for _ in 0..2_000 {
            let text: String = (0..40)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    alphabet[(state >> 33) as usize % alphabet.len()]
                })
                .collect();
            texts.push(text);
        }
        for text in &texts {
            let mut found = Vec::new();
            standard_spans(text, |start, end| found.push((start, end)));
            assert_eq!(found, spans_by_chars(text), "{text:?}");
        }
    }

    #[test]
    fn standard_matches_whoosh_rules() {
        assert_eq!(
            texts(
                Analyzer::Standard,
                "The U.S.A. is a big country, e.g. version 3.14!"
            ),
            ["u.s.a", "big", "country", "e.g", "version", "3.14"]
        );
        // Stop words and one-character tokens go; underscores are word characters.
        assert_eq!(
            texts(Analyzer::Standard, "I saw x and snake_case at 5 pm"),
            ["saw", "snake_case", "pm"]
        );
        // Query syntax is plain text.
        assert_eq!(
            texts(Analyzer::Standard, "title:cats AND \"dogs\" OR (birds*)"),
            ["title", "cats", "dogs", "birds"]
        );
        assert_eq!(
            texts(Analyzer::Standard, "Ünïcödé CAFÉ"),
            ["ünïcödé", "café"]
        );
        assert!(texts(Analyzer::Standard, "  \t ").is_empty());
    }

    #[test]
    fn stop_keys_are_sorted_distinct_and_name_exactly_the_stop_words() {
        assert!(STOP_KEYS.windows(2).all(|w| w[0] < w[1]));
        let listed = |t: &str| ENGLISH_STOP_WORDS.contains(&t) || CHINESE_STOP_WORDS.contains(&t);
        let odd = [
            "", "a\0", "\0a", "an\0", "th", "thes", "tha", "wh", "的了", "和\0",
        ];
        let mut candidates: Vec<String> = odd.map(String::from).to_vec();
        for a in ["a", "b", "e", "i", "n", "o", "s", "t", "u", "w", "y"] {
            for b in ["", "a", "d", "e", "f", "n", "o", "r", "s", "t"] {
                for c in ["", "d", "e", "n", "s", "t", "u"] {
                    candidates.push(format!("{a}{b}{c}"));
                }
            }
        }
        let lists = ENGLISH_STOP_WORDS.iter().chain(&CHINESE_STOP_WORDS);
        candidates.extend(lists.map(|w| w.to_string()));
        for term in &candidates {
            assert_eq!(is_stop_word(term), listed(term), "{term:?}");
        }
    }

    #[test]
    fn every_stop_word_is_within_the_length_checked_first() {
        let lists = ENGLISH_STOP_WORDS.iter().chain(&CHINESE_STOP_WORDS);
        assert_eq!(lists.map(|w| w.len()).max(), Some(LONGEST_STOP_WORD));
        for word in ENGLISH_STOP_WORDS.iter().chain(&CHINESE_STOP_WORDS) {
            assert!(is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn for_each_term_visits_what_analyze_returns() {
        let samples = [
            "The U.S.A. is a big country, e.g. version 3.14!",
            "I saw x and snake_case at 5 pm; painted PAINTING runs",
            "ΣΊΣΥΦΟΣ Ünïcödé CAFÉ straße İstanbul",
            "我们在北京大学学习法律和 Rust programming",
            "",
        ];
        for analyzer in Analyzer::ALL {
            for text in samples {
                let mut visited = Vec::new();
                analyzer.for_each_term(text, |t| visited.push(t.to_string()));
                assert_eq!(visited, texts(analyzer, text), "{analyzer:?} on {text:?}");
            }
        }
    }

    #[test]
    fn offsets_point_at_source() {
        let s = "Hello, wonderful World";
        for t in Analyzer::Standard.analyze(s) {
            assert_eq!(s[t.start..t.end].to_lowercase(), t.text);
        }
    }

    #[test]
    fn cjk_segments_chinese_and_keeps_latin_rules() {
        let terms = texts(Analyzer::Cjk, "我们在北京大学学习法律和 Rust programming");
        assert!(terms.contains(&"北京大学".to_string()) || terms.contains(&"北京".to_string()));
        assert!(terms.contains(&"法律".to_string()));
        assert!(!terms.contains(&"和".to_string()));
        assert!(terms.contains(&"rust".to_string()));
        assert!(terms.contains(&"programming".to_string()));
        assert!(terms.iter().all(|t| !t.trim().is_empty()));
        // The standard analyzer keeps a CJK run as one long token (Whoosh behaviour).
        assert_eq!(
            texts(Analyzer::Standard, "北京大学 法律"),
            ["北京大学", "法律"]
        );
    }
}
