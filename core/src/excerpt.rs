//! Short excerpts of text that came from outside, for error messages.
//!
//! An error may quote what it refused (a parser's "invalid type: string \"…\""), and what it
//! refused may be a 50 MB value. [`excerpt`] keeps a message readable on one screen: its start
//! and end, and how much was left out between them.

use std::borrow::Cow;

/// Most characters of an error message a person is shown.
pub const MESSAGE_CHARS: usize = 1_000;

/// `text` itself when it has at most `max` characters, else its first and last characters
/// (about two thirds and one third of `max`) around a note of how many bytes were left out.
pub fn excerpt(text: &str, max: usize) -> Cow<'_, str> {
    let chars = text.chars().count();
    if chars <= max {
        return Cow::Borrowed(text);
    }
    let head_chars = max * 2 / 3;
    let tail_chars = max - head_chars;
    let head_end = text
        .char_indices()
        .nth(head_chars)
        .map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(chars - tail_chars)
        .map_or(text.len(), |(i, _)| i);
    Cow::Owned(format!(
        "{} […{} bytes left out…] {}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_and_long_text_keeps_both_ends() {
        assert_eq!(excerpt("short", 10), "short");
        let long = format!("start{}end", "é".repeat(10_000));
        let cut = excerpt(&long, 30);
        assert!(
            cut.starts_with("startéé") && cut.ends_with("ééend"),
            "{cut}"
        );
        assert!(cut.contains("bytes left out"), "{cut}");
        assert!(cut.chars().count() < 80, "{cut}");
    }
}
