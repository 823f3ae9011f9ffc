//! Python's `repr()` of the values upstream puts into prompts with `str()`: a list of strings,
//! a list of dictionaries of strings, any value `json.loads` gives. Upstream's Mem0 writes its stored memories and new facts
//! into the update prompt this way, so the same characters must go out here.

use serde_json::Value;

/// `repr(text)` of a Python `str`: single quotes unless the text holds a single quote and no
/// double quote; backslash escapes for the quote, backslashes, `\t`, `\n`, `\r`, and `\x..`,
/// `\u....` or `\U........` for the characters Python does not print.
pub fn repr_str(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// `repr(items)` of a Python list of strings.
pub fn repr_str_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<String> = items.into_iter().map(repr_str).collect();
    format!("[{}]", items.join(", "))
}

/// `repr(items)` of a Python list of dictionaries with string keys and values, each in the
/// order its pairs are given (a Python dictionary keeps insertion order).
pub fn repr_dict_list(items: &[Vec<(&str, &str)>]) -> String {
    let dicts: Vec<String> = items
        .iter()
        .map(|pairs| {
            let pairs: Vec<String> = pairs
                .iter()
                .map(|(key, value)| format!("{}: {}", repr_str(key), repr_str(value)))
                .collect();
            format!("{{{}}}", pairs.join(", "))
        })
        .collect();
    format!("[{}]", dicts.join(", "))
}

/// Python's `repr()` (and `str()`) of what `json.loads` gives for `value`: `None`, `True`,
/// integers with their digits, floats as Python writes them, strings by [`repr_str`], lists, and
/// dictionaries in the order the map holds its keys.
pub fn repr_json(value: &Value) -> String {
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => repr_float(x),
            _ => n.to_string(),
        },
        Value::String(s) => repr_str(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(repr_json).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let pairs: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{}: {}", repr_str(key), repr_json(value)))
                .collect();
            format!("{{{}}}", pairs.join(", "))
        }
    }
}

/// Python's `repr(x)` of a float: the shortest digits that read back as `x` (Rust finds the
/// same ones), in fixed notation when the decimal exponent is from -4 to 15 and with `.0` on
/// whole numbers, else in scientific notation with a signed exponent of at least two digits.
pub fn repr_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let body = if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            let whole = exponent as usize + 1;
            let padded = format!("{digits:0<whole$}");
            let (int, frac) = padded.split_at(whole);
            format!("{int}.{}", if frac.is_empty() { "0" } else { frac })
        } else {
            format!("0.{}{digits}", "0".repeat((-exponent - 1) as usize))
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{first}{point}e{exp_sign}{:02}", exponent.abs())
    };
    format!("{sign}{body}")
}

/// Whether Python's `str.isprintable` holds for `c`: not a control or format character, not a
/// separator other than the space, not a private-use one. (Unassigned code points, which Python
/// escapes too, are printed here: Rust's standard library has no Unicode category table.)
fn is_printable(c: char) -> bool {
    let code = c as u32;
    !(c.is_control()
        || matches!(
            code,
            0xa0 | 0xad
                | 0x600..=0x605
                | 0x61c
                | 0x6dd
                | 0x70f
                | 0x1680
                | 0x180e
                | 0x2000..=0x200f
                | 0x2028..=0x202f
                | 0x205f..=0x2064
                | 0x2066..=0x206f
                | 0x3000
                | 0xfeff
                | 0xfff9..=0xfffb
                | 0xe000..=0xf8ff
                | 0xf0000..=0x10ffff
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_escapes_as_python_does() {
        assert_eq!(repr_str("plain"), "'plain'");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(repr_str("a\\b\nc\td\re"), "'a\\\\b\\nc\\td\\re'");
        assert_eq!(repr_str("\u{1}\u{7f}"), "'\\x01\\x7f'");
        assert_eq!(repr_str("nbsp\u{a0}zwsp\u{200b}"), "'nbsp\\xa0zwsp\\u200b'");
        assert_eq!(repr_str("café 猫 😀"), "'café 猫 😀'");
    }

    #[test]
    fn loaded_json_and_floats_as_python_prints_them() {
        let value = serde_json::json!({"a": [1, 2.5, null, true], "b": "it's", "c": {"d": 1e16}});
        assert_eq!(
            repr_json(&value),
            "{'a': [1, 2.5, None, True], 'b': \"it's\", 'c': {'d': 1e+16}}"
        );
        for (x, python) in [
            (1.0, "1.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456789012345.6, "123456789012345.6"),
            (1234567890123456.7, "1234567890123456.8"),
            (1e16, "1e+16"),
            (-2.5e-7, "-2.5e-07"),
            (1.5e300, "1.5e+300"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(repr_float(x), python, "{x}");
        }
    }

    #[test]
    fn lists_and_dictionaries_as_python_prints_them() {
        assert_eq!(repr_str_list(["a", "it's"]), "['a', \"it's\"]");
        assert_eq!(repr_str_list([]), "[]");
        assert_eq!(
            repr_dict_list(&[vec![("id", "0"), ("text", "Likes tea")]]),
            "[{'id': '0', 'text': 'Likes tea'}]"
        );
    }
}
