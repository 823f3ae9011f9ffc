//! A query printed exactly as Python's `repr()` prints the Whoosh query, so the parser can be
//! checked against Whoosh itself by comparing text.

use std::fmt::{self, Display, Formatter, Write};

use super::WhooshQuery;

impl Display for WhooshQuery {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        use WhooshQuery::*;
        match self {
            Term { field, text, boost } => term_like(f, "Term", field, text, *boost),
            Wildcard {
                field,
                pattern,
                boost,
            } => term_like(f, "Wildcard", field, pattern, *boost),
            Prefix {
                field,
                prefix,
                boost,
            } => term_like(f, "Prefix", field, prefix, *boost),
            Phrase {
                field,
                words,
                slop,
                boost,
            } => {
                write!(f, "Phrase({}, [", PyStr(field))?;
                for (i, w) in words.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", PyStr(w))?;
                }
                let boost = f64::from(*boost);
                if boost.is_nan() {
                    write!(f, "], slop={slop}, boost=nan)")
                } else {
                    write!(f, "], slop={slop}, boost={boost:.6})")
                }
            }
            Range {
                field,
                start,
                end,
                start_excl,
                end_excl,
                boost,
            } => {
                let bound = |b: &Option<String>| match b {
                    Some(s) => PyStr(s).to_string(),
                    None => "None".to_string(),
                };
                write!(
                    f,
                    "TermRange({}, {}, {}, {}, {}, boost={}, constantscore=True)",
                    PyStr(field),
                    bound(start),
                    bound(end),
                    py_bool(*start_excl),
                    py_bool(*end_excl),
                    PyFloat(*boost)
                )
            }
            Every { field, boost } if field.is_empty() => {
                write!(f, "Every(None, boost={})", PyFloat(*boost))
            }
            Every { field, boost } => {
                write!(f, "Every({}, boost={})", PyStr(field), PyFloat(*boost))
            }
            Or(subs, boost) => compound(f, "Or", subs, *boost),
            And(subs, boost) => compound(f, "And", subs, *boost),
            AndNot(a, b) => write!(f, "AndNot(({a}, {b}))"),
            AndMaybe(a, b) => write!(f, "AndMaybe(({a}, {b}))"),
            Require(a, b) => write!(f, "Require(({a}, {b}))"),
            Not(q, _) => write!(f, "Not({q})"),
            Null => f.write_str("<_NullQuery>"),
        }
    }
}

fn term_like(
    f: &mut Formatter<'_>,
    name: &str,
    field: &str,
    text: &str,
    boost: f32,
) -> fmt::Result {
    write!(f, "{name}({}, {}", PyStr(field), PyStr(text))?;
    if boost != 1.0 {
        write!(f, ", boost={}", PyFloat(boost))?;
    }
    f.write_str(")")
}

fn compound(f: &mut Formatter<'_>, name: &str, subs: &[WhooshQuery], boost: f32) -> fmt::Result {
    write!(f, "{name}([")?;
    for (i, q) in subs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{q}")?;
    }
    f.write_str("]")?;
    if boost != 1.0 {
        write!(f, ", boost={}", PyFloat(boost))?;
    }
    f.write_str(")")
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// A string as Python's `repr` prints it: single quotes unless it holds `'` and no `"`, with
/// backslash escapes for the quote, backslash, control and other unprintable characters.
struct PyStr<'a>(&'a str);

impl Display for PyStr<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.0;
        let quote = if s.contains('\'') && !s.contains('"') {
            '"'
        } else {
            '\''
        };
        f.write_char(quote)?;
        for c in s.chars() {
            match c {
                '\\' => f.write_str("\\\\")?,
                '\t' => f.write_str("\\t")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                c if c == quote => write!(f, "\\{c}")?,
                c if printable(c) => f.write_char(c)?,
                c if (c as u32) < 0x100 => write!(f, "\\x{:02x}", c as u32)?,
                c if (c as u32) < 0x10000 => write!(f, "\\u{:04x}", c as u32)?,
                c => write!(f, "\\U{:08x}", c as u32)?,
            }
        }
        f.write_char(quote)
    }
}

/// Python's `str.isprintable` for one character: not a control, format, private-use or
/// separator character (the space excepted). Unassigned code points count as printable here.
fn printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    let format = matches!(c as u32,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F);
    let private = matches!(c as u32, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    !(c.is_control() || c.is_whitespace() || format || private)
}

/// A float as Python's `repr` prints it: shortest round-trip digits, `.0` on integers,
/// exponent form below 1e-4 and from 1e16.
struct PyFloat(f32);

impl Display for PyFloat {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x.is_nan() {
            return f.write_str("nan");
        }
        if x.is_infinite() {
            return f.write_str(if x > 0.0 { "inf" } else { "-inf" });
        }
        if x == 0.0 {
            return f.write_str(if x.is_sign_negative() { "-0.0" } else { "0.0" });
        }
        let sci = format!("{:e}", x.abs());
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        let point = exp + 1;
        if x < 0.0 {
            f.write_char('-')?;
        }
        if !(-4 < point && point <= 16) {
            let (first, rest) = digits.split_at(1);
            f.write_str(first)?;
            if !rest.is_empty() {
                write!(f, ".{rest}")?;
            }
            let sign = if exp < 0 { '-' } else { '+' };
            return write!(f, "e{sign}{:02}", exp.abs());
        }
        let len = digits.len() as i32;
        if point <= 0 {
            write!(f, "0.{}{digits}", "0".repeat((-point) as usize))
        } else if point >= len {
            write!(f, "{digits}{}.0", "0".repeat((point - len) as usize))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            write!(f, "{int}.{frac}")
        }
    }
}
