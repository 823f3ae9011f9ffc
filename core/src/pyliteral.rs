//! Reading JSON or Python literals.
//!
//! Upstream stores dialogs, implicit feedback, chat messages and `info` as strings; depending on
//! how a file was written they are JSON or Python `repr` output (single quotes, `True`, `None`,
//! tuples). [`parse_column`] accepts both and returns JSON values; a malformed column is an
//! error naming the line and column of the problem. Models asked for JSON write the same
//! Python literals, often mixed with JSON's own words: [`parse_model_literal`] accepts those too.

use serde_json::{Map, Number, Value};

/// Why a column could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
#[non_exhaustive]
pub struct LiteralError {
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column (in characters) of the problem.
    pub column: usize,
    /// What was expected.
    pub message: String,
}

/// A string column's value: JSON if it parses as JSON, else a Python literal (dicts, lists,
/// tuples as arrays, strings with escapes and prefixes, numbers, `True`/`False`/`None`).
pub fn parse_column(text: &str) -> Result<Value, LiteralError> {
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    parse(text, false)
}

/// A value a model wrote: JSON, a Python literal, or a mix of the two (`{'ok': true}`), with
/// the trailing commas Python allows.
pub fn parse_model_literal(text: &str) -> Result<Value, LiteralError> {
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    parse(text, true)
}

fn parse(text: &str, json_words: bool) -> Result<Value, LiteralError> {
    let mut parser = Parser {
        chars: text.chars().collect(),
        at: 0,
        depth: 0,
        json_words,
    };
    let value = parser.value()?;
    parser.skip_space();
    if parser.at < parser.chars.len() {
        return Err(parser.error("unexpected text after the value"));
    }
    Ok(value)
}

/// Containers nested deeper than this are an error, not a stack overflow (serde_json's limit).
const MAX_DEPTH: usize = 128;

struct Parser {
    chars: Vec<char>,
    at: usize,
    /// Containers open at `at`.
    depth: usize,
    /// Whether JSON's `true`, `false` and `null` are read too.
    json_words: bool,
}

impl Parser {
    fn error(&self, message: &str) -> LiteralError {
        let before = &self.chars[..self.at.min(self.chars.len())];
        let line = before.iter().filter(|c| **c == '\n').count() + 1;
        let column = before.iter().rev().take_while(|c| **c != '\n').count() + 1;
        LiteralError {
            line,
            column,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Result<Value, LiteralError> {
        self.skip_space();
        match self.peek() {
            Some('{' | '[' | '(') => {
                if self.depth == MAX_DEPTH {
                    return Err(self.error(&format!("nested more than {MAX_DEPTH} deep")));
                }
                self.depth += 1;
                let value = match self.peek() {
                    Some('{') => self.dict(),
                    Some('[') => self.sequence(']'),
                    _ => self.sequence(')'),
                };
                self.depth -= 1;
                value
            }
            Some('\'' | '"') => self.strings().map(Value::String),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() => self.word(),
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("unexpected end of text")),
        }
    }

    fn dict(&mut self) -> Result<Value, LiteralError> {
        self.at += 1;
        let mut map = Map::new();
        loop {
            self.skip_space();
            if self.peek() == Some('}') {
                self.at += 1;
                return Ok(Value::Object(map));
            }
            let key = match self.value()? {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => if b { "True" } else { "False" }.to_string(),
                Value::Null => "None".to_string(),
                _ => {
                    return Err(self.error("dictionary keys must be strings, numbers or constants"))
                }
            };
            self.skip_space();
            if self.peek() != Some(':') {
                return Err(self.error("expected ':' after a dictionary key"));
            }
            self.at += 1;
            let value = self.value()?;
            map.insert(key, value);
            self.skip_space();
            match self.peek() {
                Some(',') => self.at += 1,
                Some('}') => {}
                _ => return Err(self.error("expected ',' or '}' in a dictionary")),
            }
        }
    }

    fn sequence(&mut self, close: char) -> Result<Value, LiteralError> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.at += 1;
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.skip_space();
            match self.peek() {
                Some(',') => self.at += 1,
                Some(c) if c == close => {}
                _ => return Err(self.error(&format!("expected ',' or '{close}'"))),
            }
        }
    }

    /// One or more adjacent string literals, concatenated as Python does.
    fn strings(&mut self) -> Result<String, LiteralError> {
        let mut out = self.string(false)?;
        loop {
            let save = self.at;
            self.skip_space();
            match self.peek() {
                Some('\'' | '"') => out.push_str(&self.string(false)?),
                Some('r' | 'R' | 'u' | 'U')
                    if matches!(self.chars.get(self.at + 1), Some('\'' | '"')) =>
                {
                    let raw = matches!(self.peek(), Some('r' | 'R'));
                    self.at += 1;
                    out.push_str(&self.string(raw)?);
                }
                _ => {
                    self.at = save;
                    return Ok(out);
                }
            }
        }
    }

    fn string(&mut self, raw: bool) -> Result<String, LiteralError> {
        let quote = self.peek().ok_or_else(|| self.error("expected a string"))?;
        let triple = self.chars.get(self.at..self.at + 3) == Some(&[quote, quote, quote][..]);
        self.at += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            if c == quote {
                if !triple {
                    self.at += 1;
                    return Ok(out);
                }
                if self.chars.get(self.at..self.at + 3) == Some(&[quote, quote, quote][..]) {
                    self.at += 3;
                    return Ok(out);
                }
            }
            if c == '\n' && !triple {
                return Err(self.error("line break inside a string"));
            }
            self.at += 1;
            if c != '\\' {
                out.push(c);
                continue;
            }
            let escaped = self
                .peek()
                .ok_or_else(|| self.error("unterminated escape"))?;
            self.at += 1;
            if raw {
                out.push('\\');
                out.push(escaped);
                continue;
            }
            match escaped {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'v' => out.push('\u{b}'),
                '\\' | '\'' | '"' => out.push(escaped),
                '\n' => {}
                'x' => out.push(self.hex_char(2)?),
                'u' => out.push(self.hex_char(4)?),
                'U' => out.push(self.hex_char(8)?),
                other => {
                    // Python keeps unknown escapes as written.
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }

    fn hex_char(&mut self, digits: usize) -> Result<char, LiteralError> {
        let hex: String = self
            .chars
            .get(self.at..self.at + digits)
            .unwrap_or(&[])
            .iter()
            .collect();
        let code = u32::from_str_radix(&hex, 16)
            .ok()
            .filter(|_| hex.len() == digits);
        let c = code
            .and_then(char::from_u32)
            .ok_or_else(|| self.error("invalid escape sequence"))?;
        self.at += digits;
        Ok(c)
    }

    fn number(&mut self) -> Result<Value, LiteralError> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
        {
            self.at += 1;
        }
        let text: String = self.chars[start..self.at]
            .iter()
            .filter(|c| **c != '_')
            .collect();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        text.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| {
                self.at = start;
                self.error("invalid number")
            })
    }

    fn word(&mut self) -> Result<Value, LiteralError> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.at += 1;
        }
        let word: String = self.chars[start..self.at].iter().collect();
        match word.as_str() {
            "True" => Ok(Value::Bool(true)),
            "False" => Ok(Value::Bool(false)),
            "None" => Ok(Value::Null),
            "true" if self.json_words => Ok(Value::Bool(true)),
            "false" if self.json_words => Ok(Value::Bool(false)),
            "null" if self.json_words => Ok(Value::Null),
            "r" | "R" | "u" | "U" if matches!(self.peek(), Some('\'' | '"')) => {
                let raw = matches!(word.as_str(), "r" | "R");
                let mut out = self.string(raw)?;
                // Adjacent literals may follow.
                let save = self.at;
                self.skip_space();
                if matches!(self.peek(), Some('\'' | '"')) {
                    out.push_str(&self.strings()?);
                } else {
                    self.at = save;
                }
                Ok(Value::String(out))
            }
            _ => {
                self.at = start;
                Err(self.error(&format!("unknown name {word:?}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_python_literals() {
        assert_eq!(
            parse_column(r#"{"a": [1, 2.5, null]}"#).unwrap(),
            json!({"a": [1, 2.5, null]})
        );
        assert_eq!(
            parse_column("[{'role': 'user', 'content': \"it's\"}, ('x', True, None,)]").unwrap(),
            json!([{"role": "user", "content": "it's"}, ["x", true, null]])
        );
        assert_eq!(
            parse_column(r"'a\nb\x41\u00e9\\'").unwrap(),
            json!("a\nbAé\\")
        );
        assert_eq!(parse_column("'ab' \"cd\"").unwrap(), json!("abcd"));
        assert_eq!(parse_column("r'\\d+'").unwrap(), json!("\\d+"));
        assert_eq!(
            parse_column("{1: -3, 'k': 1e3}").unwrap(),
            json!({"1": -3, "k": 1000.0})
        );
        assert_eq!(
            parse_column("'''multi\nline'''").unwrap(),
            json!("multi\nline")
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        // Python tuples nest as deep as memory allows; this parser stops at 128.
        let deep = format!("{}1{}", "(".repeat(200_000), ")".repeat(200_000));
        let error = parse_column(&deep).unwrap_err();
        assert!(
            error.message.contains("nested more than 128 deep"),
            "{error:?}"
        );
        let fine = format!("{}1{}", "(".repeat(128), ")".repeat(128));
        assert!(parse_column(&fine).is_ok());
    }

    #[test]
    fn errors_point_at_the_problem() {
        let error = parse_column("[{'a': 1},\n {'b' 2}]").unwrap_err();
        assert_eq!((error.line, error.column), (2, 7));
        assert!(error.message.contains("':'"));
        assert!(parse_column("{'a': Nope}")
            .unwrap_err()
            .message
            .contains("Nope"));
        assert!(parse_column("'open")
            .unwrap_err()
            .message
            .contains("unterminated"));
        assert!(parse_column("[1, 2] tail").is_err());
        assert!(parse_column("").is_err());
    }
}
