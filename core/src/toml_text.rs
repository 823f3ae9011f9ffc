//! TOML settings parsed with errors that fit on one line.
//!
//! The `toml` crate's error display quotes the offending line with a caret under it, over
//! several lines: right for a compiler, wrong for a command that prints one line per error.
//! [`parse_toml`] keeps the same facts (line, column, what is wrong) on one line.

use serde::de::DeserializeOwned;

/// Why TOML text could not be read: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}{message}")]
pub struct TomlError {
    /// `line L, column C: `, or nothing when the parser names no place.
    place: String,
    /// The parser's message, on one line.
    message: String,
}

/// Parses `text` as TOML into `T`.
pub fn parse_toml<T: DeserializeOwned>(text: &str) -> Result<T, TomlError> {
    toml::from_str(text).map_err(|error| {
        let place = error.span().map_or_else(String::new, |span| {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: ")
        });
        let message = error
            .message()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        TomlError { place, message }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn an_error_names_the_line_and_column_on_one_line() {
        let text = "a = 1\nb = 2\na = 3\n";
        let error = parse_toml::<BTreeMap<String, i64>>(text).unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("line 3, column 1: "), "{message}");
        assert!(message.contains("duplicate key"), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }

    #[test]
    fn a_type_error_and_a_torn_file_are_one_line_too() {
        for text in ["a = \"x\"\n", "a = [1,\n", "[a\n", "a = 1\né"] {
            let error = parse_toml::<BTreeMap<String, i64>>(text).unwrap_err();
            let message = error.to_string();
            assert!(
                !message.is_empty() && !message.contains('\n'),
                "{text:?}: {message}"
            );
        }
        let parsed: BTreeMap<String, i64> = parse_toml("a = 1\n").unwrap();
        assert_eq!(parsed["a"], 1);
    }
}
