//! Python's own small text operations where upstream applies them to what it sends:
//! `str.strip()` (with Python's idea of white space), `str.strip(chars)`, and the fixed-point
//! format `f"{x:.4f}"`.

use super::Piece;

/// Python's `str.isspace` for one character: Unicode white space plus the separators
/// U+001C–U+001F, which Rust's `char::is_whitespace` leaves out.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `text.strip()`.
pub fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// Python's `text.strip(chars)`: every character of `chars` removed from both ends.
pub fn strip_chars<'a>(text: &'a str, chars: &str) -> &'a str {
    text.trim_matches(|c| chars.contains(c))
}

/// Python's `f"{value:.{places}f}"`: fixed point, rounded half to even on the exact binary
/// value as both languages do, with Python's words for the values that are not numbers.
pub fn fixed(value: f64, places: usize) -> String {
    if value.is_nan() {
        "nan".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{value:.places$}")
    }
}

/// A template's pieces after Python's `.strip()` of the literal they came from: white space
/// removed from the start of the leading text and the end of the trailing text (a field at
/// either end stops the stripping there, as the literal's own braces would).
pub(crate) fn strip_pieces(mut pieces: Vec<Piece>) -> Vec<Piece> {
    while let Some(Piece::Text(text)) = pieces.first_mut() {
        let kept = text.trim_start_matches(is_space).to_string();
        if kept.is_empty() {
            pieces.remove(0);
        } else {
            *text = kept;
            break;
        }
    }
    while let Some(Piece::Text(text)) = pieces.last_mut() {
        let kept = text.trim_end_matches(is_space).to_string();
        if kept.is_empty() {
            pieces.pop();
        } else {
            *text = kept;
            break;
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_and_formats_as_python() {
        assert_eq!(strip("\u{1c} a b \n\u{3000}"), "a b");
        assert_eq!(strip_chars("```json\n{}\n```", "json|`"), "\n{}\n");
        assert_eq!(strip_chars("json{\"s\":1}nos", "json|`"), "{\"s\":1}");
        assert_eq!(fixed(0.123_45, 4), "0.1235");
        assert_eq!(fixed(2.5, 0), "2");
        assert_eq!(fixed(1.0 / 3.0, 4), "0.3333");
        assert_eq!(fixed(f64::NAN, 4), "nan");
        assert_eq!(fixed(-0.0, 4), "-0.0000");
    }

    #[test]
    fn a_stripped_template_keeps_its_fields() {
        let text = |t: &str| Piece::Text(t.into());
        let field = Piece::Field {
            key: "x".into(),
            conversion: None,
            spec: String::new(),
        };
        let pieces = strip_pieces(vec![text("\n  "), text(" a "), field.clone(), text(" \n")]);
        assert_eq!(pieces, vec![text("a "), field.clone()]);
        assert_eq!(strip_pieces(vec![field.clone()]), vec![field]);
    }
}
