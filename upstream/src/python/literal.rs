//! One Python string literal as written, and its value: escapes decoded, and for f-strings
//! (or strings upstream fills with `str.format`) the replacement fields kept apart.

/// A string literal as it stands in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// `f`, `r`, `rb`, … as written (empty for none).
    pub prefix: String,
    /// The text between the quotes, undecoded.
    pub body: String,
    /// The whole literal, prefix and quotes included: what its hash is taken of.
    pub source: String,
}

/// A piece of a literal's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text as it is.
    Text(String),
    /// A replacement field: `{key}` (the expression's text, or a `str.format` name; `{}` fields
    /// are numbered `0`, `1`, … as `str.format` numbers them).
    Field {
        /// What fills the field.
        key: String,
        /// `r`, `s` or `a` after a `!`, if any.
        conversion: Option<char>,
        /// The format spec after a `:`, if any (empty for none).
        spec: String,
    },
}

/// Why a literal's value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LiteralError(pub String);

impl Literal {
    /// Whether `word` is a string prefix Python accepts.
    pub fn is_prefix(word: &str) -> bool {
        matches!(
            word.to_ascii_lowercase().as_str(),
            "r" | "u" | "f" | "b" | "br" | "rb" | "fr" | "rf"
        )
    }

    fn has(&self, letter: char) -> bool {
        self.prefix.to_ascii_lowercase().contains(letter)
    }

    /// Whether this is an f-string.
    pub fn is_fstring(&self) -> bool {
        self.has('f')
    }

    /// The value: fields apart when this is an f-string or `format` says it is filled by
    /// `str.format`, else one piece of text.
    pub fn pieces(&self, format: bool, numbered: &mut usize) -> Result<Vec<Piece>, LiteralError> {
        let raw = self.has('r');
        if self.is_fstring() {
            // Fields are read from the source; escapes apply to the text around them.
            let mut pieces = split_fields(&self.body, numbered)?;
            for piece in &mut pieces {
                if let Piece::Text(text) = piece {
                    *text = decode(text, raw)?;
                }
            }
            Ok(pieces)
        } else if format {
            split_fields(&decode(&self.body, raw)?, numbered)
        } else {
            Ok(vec![Piece::Text(decode(&self.body, raw)?)])
        }
    }
}

/// `text` split at its replacement fields (`{{` and `}}` are literal braces).
fn split_fields(text: &str, numbered: &mut usize) -> Result<Vec<Piece>, LiteralError> {
    let chars: Vec<char> = text.chars().collect();
    let mut pieces = Vec::new();
    let mut plain = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '{' if chars.get(i + 1) == Some(&'{') => {
                plain.push('{');
                i += 2;
            }
            '}' if chars.get(i + 1) == Some(&'}') => {
                plain.push('}');
                i += 2;
            }
            '}' => return Err(LiteralError("a single '}' outside a field".into())),
            '{' => {
                let end = field_end(&chars, i + 1)?;
                if !plain.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut plain)));
                }
                pieces.push(field(&chars[i + 1..end], numbered));
                i = end + 1;
            }
            c => {
                plain.push(c);
                i += 1;
            }
        }
    }
    if !plain.is_empty() {
        pieces.push(Piece::Text(plain));
    }
    Ok(pieces)
}

/// The index of the `}` closing the field that starts at `start`, brackets and quotes inside
/// the expression skipped.
fn field_end(chars: &[char], start: usize) -> Result<usize, LiteralError> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, &c) in chars.iter().enumerate().skip(start) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']') => depth = depth.saturating_sub(1),
            (None, '}') if depth == 0 => return Ok(i),
            (None, '}') => depth -= 1,
            _ => {}
        }
    }
    Err(LiteralError("a '{' field is not closed".into()))
}

/// A field's key, conversion and spec, from the text between its braces.
fn field(inner: &[char], numbered: &mut usize) -> Piece {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut key_end = inner.len();
    for (i, &c) in inner.iter().enumerate() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            (None, '!') if depth == 0 && inner.get(i + 1) != Some(&'=') => {
                key_end = i;
                break;
            }
            (None, ':') if depth == 0 => {
                key_end = i;
                break;
            }
            _ => {}
        }
    }
    let mut key: String = inner[..key_end]
        .iter()
        .collect::<String>()
        .trim()
        .to_string();
    if key.is_empty() {
        key = numbered.to_string();
        *numbered += 1;
    }
    let rest: String = inner[key_end..].iter().collect();
    let (conversion, spec) = match rest.strip_prefix('!') {
        Some(after) => {
            let mut chars = after.chars();
            let conversion = chars.next();
            let spec = chars.as_str().strip_prefix(':').unwrap_or("").to_string();
            (conversion, spec)
        }
        None => (None, rest.strip_prefix(':').unwrap_or("").to_string()),
    };
    Piece::Field {
        key,
        conversion,
        spec,
    }
}

/// Python's escape sequences decoded (`raw`: none are, as in `r"…"`).
fn decode(text: &str, raw: bool) -> Result<String, LiteralError> {
    if raw {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        match next {
            '\n' => {}
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut value = next.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(digit) => {
                            value = value * 8 + digit;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char_of(value)?);
            }
            'x' | 'u' | 'U' => {
                let digits = match next {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..digits).filter_map(|_| chars.next()).collect();
                let value = u32::from_str_radix(&hex, 16)
                    .map_err(|_| LiteralError(format!("a bad \\{next} escape: {hex:?}")))?;
                out.push(char_of(value)?);
            }
            'N' => return Err(LiteralError("\\N{…} escapes are not read".into())),
            other => {
                // Python keeps an unknown escape as written.
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

fn char_of(value: u32) -> Result<char, LiteralError> {
    char::from_u32(value).ok_or_else(|| LiteralError(format!("escape {value:#x} is no character")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(prefix: &str, body: &str) -> Literal {
        Literal {
            prefix: prefix.into(),
            body: body.into(),
            source: String::new(),
        }
    }

    fn text(s: &str) -> Piece {
        Piece::Text(s.into())
    }

    fn key(s: &str) -> Piece {
        Piece::Field {
            key: s.into(),
            conversion: None,
            spec: String::new(),
        }
    }

    #[test]
    fn fstring_fields_and_doubled_braces() {
        let pieces = literal("f", r#"a {x} {{"k": 1}} {now().strftime("%Y-%m-%d")}\n"#)
            .pieces(false, &mut 0)
            .unwrap();
        assert_eq!(
            pieces,
            vec![
                text("a "),
                key("x"),
                text(" {\"k\": 1} "),
                key("now().strftime(\"%Y-%m-%d\")"),
                text("\n"),
            ]
        );
    }

    #[test]
    fn format_strings_number_their_empty_fields() {
        let mut numbered = 0;
        let pieces = literal("", "Q: {} A: {}")
            .pieces(true, &mut numbered)
            .unwrap();
        assert_eq!(pieces, vec![text("Q: "), key("0"), text(" A: "), key("1")]);
        let plain = literal("", "{not a field}").pieces(false, &mut 0).unwrap();
        assert_eq!(plain, vec![text("{not a field}")]);
    }

    #[test]
    fn conversions_and_specs_are_kept_apart() {
        let pieces = literal("f", "{a!r} {b:.2f}").pieces(false, &mut 0).unwrap();
        assert_eq!(
            pieces[0],
            Piece::Field {
                key: "a".into(),
                conversion: Some('r'),
                spec: String::new()
            }
        );
        assert_eq!(
            pieces[2],
            Piece::Field {
                key: "b".into(),
                conversion: None,
                spec: ".2f".into()
            }
        );
    }

    #[test]
    fn escapes_as_python_reads_them() {
        let value = literal(
            "",
            r"tab\there \u4e2d \x41 \101 \q line\
joined",
        )
        .pieces(false, &mut 0)
        .unwrap();
        assert_eq!(value, vec![text("tab\there 中 A A \\q linejoined")]);
        let raw = literal("r", r"\n").pieces(false, &mut 0).unwrap();
        assert_eq!(raw, vec![text("\\n")]);
    }

    #[test]
    fn a_lone_closing_brace_is_an_error() {
        assert!(literal("f", "a } b").pieces(false, &mut 0).is_err());
    }
}
