//! Python's regular-expression character classes (`\s`, `\w`), as NLTK's tokenizers see text.

use std::sync::LazyLock;

use regex::Regex;

/// A compiled pattern that is part of the source (never built from input).
pub(crate) fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|_| unreachable!("tokenizer patterns are valid"))
}

/// Python's `\s`: Unicode whitespace plus the separators U+001C–U+001F.
pub(crate) fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

static WORD_CHAR: LazyLock<Regex> = LazyLock::new(|| re(r"^[\p{L}\p{N}_]$"));

/// Python's `\w` (letters, numbers, underscore).
pub(crate) fn py_word(c: char) -> bool {
    WORD_CHAR.is_match(c.encode_utf8(&mut [0; 4]))
}
