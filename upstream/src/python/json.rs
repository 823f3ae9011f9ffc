//! Python's `json.dumps(json.loads(text), indent=2, ensure_ascii=False)`: what upstream's
//! MemoryOS shows of a stored profile (and its compact, ASCII form, given to the profile
//! analysis). Objects keep their keys in the order written (Python's
//! dictionaries do; `serde_json::Value` would sort them), strings are escaped as Python escapes
//! them, integers keep their digits. Floats are written as Rust writes them, which can differ
//! from Python's `repr` in the exponent's form (`1e-5` for Python's `1e-05`).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value with its object keys in the order written.
#[derive(Debug, Clone, PartialEq)]
enum Ordered {
    Null,
    Bool(bool),
    Int(String),
    Float(f64),
    Text(String),
    List(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    /// Python's truth value of the loaded value.
    fn is_truthy(&self) -> bool {
        match self {
            Ordered::Null => false,
            Ordered::Bool(b) => *b,
            Ordered::Int(digits) => !digits
                .trim_start_matches('-')
                .trim_start_matches('0')
                .is_empty(),
            Ordered::Float(x) => *x != 0.0,
            Ordered::Text(s) => !s.is_empty(),
            Ordered::List(items) => !items.is_empty(),
            Ordered::Object(pairs) => !pairs.is_empty(),
        }
    }

    fn write(&self, out: &mut String, depth: usize) {
        let indent = |out: &mut String, depth: usize| {
            out.push('\n');
            out.push_str(&"  ".repeat(depth));
        };
        match self {
            Ordered::Null => out.push_str("null"),
            Ordered::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Ordered::Int(digits) => out.push_str(digits),
            Ordered::Float(x) => out.push_str(&float(*x)),
            Ordered::Text(s) => out.push_str(&string(s)),
            Ordered::List(items) if items.is_empty() => out.push_str("[]"),
            Ordered::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    item.write(out, depth + 1);
                }
                indent(out, depth);
                out.push(']');
            }
            Ordered::Object(pairs) if pairs.is_empty() => out.push_str("{}"),
            Ordered::Object(pairs) => {
                out.push('{');
                for (i, (key, value)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    out.push_str(&string(key));
                    out.push_str(": ");
                    value.write(out, depth + 1);
                }
                indent(out, depth);
                out.push('}');
            }
        }
    }
}

/// A float as Rust's shortest round-trip form, its exponent (if any) written as Python writes
/// one: a sign and at least two digits (`1e-05`, `1e+20`).
fn float(x: f64) -> String {
    let text = format!("{x:?}");
    match text.split_once('e') {
        Some((mantissa, exponent)) => {
            let (sign, digits) = match exponent.strip_prefix('-') {
                Some(digits) => ('-', digits),
                None => ('+', exponent),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => text,
    }
}

/// A JSON string as Python writes it with `ensure_ascii=False`: `"` and `\` escaped, `\n`,
/// `\r`, `\t`, `\b`, `\f` by name, other control characters as `\u00XX`.
fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Upstream's text of a stored profile: `json.dumps(profile, indent=2, ensure_ascii=False)`
/// where the profile is the model's reply loaded as JSON, or `{"raw_text_profile": reply}` when
/// it is not JSON; `None` when the loaded profile is falsy (Python's `if profile`), where
/// upstream shows its stand-in text instead.
pub fn profile_text(reply: &str) -> Option<String> {
    let profile = load_profile(reply);
    if !profile.is_truthy() {
        return None;
    }
    let mut out = String::new();
    profile.write(&mut out, 0);
    Some(out)
}

/// What upstream's MemoryOS gives its profile analysis as the existing profile:
/// `json.dumps(profile or {})` (compact separators `, ` and `: `, non-ASCII escaped), the
/// profile loaded from the model's stored reply as [`profile_text`] loads it.
pub fn profile_argument(stored: Option<&str>) -> String {
    let profile = stored.map(load_profile).filter(Ordered::is_truthy);
    let mut out = String::new();
    match profile {
        Some(profile) => profile.write_compact(&mut out),
        None => out.push_str("{}"),
    }
    out
}

/// `json.dumps(value, ensure_ascii=False)`: separators `, ` and `: `, non-ASCII kept. An
/// object's keys named in `key_order` come first, in that order, the others after them in
/// `value`'s own order (a `serde_json` map has lost the order they were written in, so the
/// caller names the order its data was written in).
pub fn dumps_unicode(value: &serde_json::Value, key_order: &[&str]) -> String {
    let mut out = String::new();
    write_unicode(value, key_order, &mut out);
    out
}

fn write_unicode(value: &serde_json::Value, key_order: &[&str], out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (None, Some(u), _) => out.push_str(&u.to_string()),
            (None, None, Some(x)) => out.push_str(&float(x)),
            (None, None, None) => out.push_str(&n.to_string()),
        },
        Value::String(s) => out.push_str(&string(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_unicode(item, key_order, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = key_order
                .iter()
                .filter_map(|k| map.get_key_value(*k).map(|(key, _)| key))
                .collect();
            keys.extend(map.keys().filter(|k| !key_order.contains(&k.as_str())));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&string(key));
                out.push_str(": ");
                write_unicode(&map[key], key_order, out);
            }
            out.push('}');
        }
    }
}

/// A stored reply as upstream loads it: its JSON, or the text wrapped as `raw_text_profile`.
fn load_profile(reply: &str) -> Ordered {
    serde_json::from_str::<Ordered>(reply).unwrap_or_else(|_| {
        Ordered::Object(vec![(
            "raw_text_profile".to_string(),
            Ordered::Text(reply.to_string()),
        )])
    })
}

impl Ordered {
    /// `json.dumps` with its defaults: `, ` and `: `, every non-ASCII character as `\uXXXX`.
    fn write_compact(&self, out: &mut String) {
        match self {
            Ordered::Text(s) => out.push_str(&ascii_string(s)),
            Ordered::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            Ordered::Object(pairs) => {
                out.push('{');
                for (i, (key, value)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&ascii_string(key));
                    out.push_str(": ");
                    value.write_compact(out);
                }
                out.push('}');
            }
            scalar => scalar.write(out, 0),
        }
    }
}

/// A JSON string as Python's `json.dumps` writes it by default (`ensure_ascii=True`): `"` and
/// `\` escaped, `\n`, `\r`, `\t`, `\b`, `\f` by name, every other character outside
/// printable ASCII (controls, DEL, non-ASCII) as `\uXXXX` (UTF-16 units).
pub fn ascii_string(text: &str) -> String {
    let mut out = String::new();
    for c in string(text).chars() {
        if (' '..='~').contains(&c) {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Ordered, D::Error> {
        deserializer.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Ordered, E> {
        Ok(Ordered::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Ordered, E> {
        Ok(Ordered::Int(n.to_string()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Ordered, E> {
        Ok(Ordered::Int(n.to_string()))
    }

    fn visit_f64<E>(self, x: f64) -> Result<Ordered, E> {
        Ok(Ordered::Float(x))
    }

    fn visit_str<E>(self, s: &str) -> Result<Ordered, E> {
        Ok(Ordered::Text(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Ordered, E> {
        Ok(Ordered::Text(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut pairs: Vec<(String, Ordered)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Ordered>()? {
            // A repeated key keeps its first place and takes the last value, as a dict does.
            match pairs.iter_mut().find(|(k, _)| *k == key) {
                Some(pair) => pair.1 = value,
                None => pairs.push((key, value)),
            }
        }
        Ok(Ordered::Object(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_that_is_no_json_is_wrapped_as_raw_text() {
        assert_eq!(
            profile_text("Likes \"tea\"\nand cats.").unwrap(),
            "{\n  \"raw_text_profile\": \"Likes \\\"tea\\\"\\nand cats.\"\n}"
        );
    }

    #[test]
    fn json_keeps_its_key_order_and_falsy_profiles_show_nothing() {
        assert_eq!(
            profile_text("{\"z\": [1, {\"b\": null, \"a\": true}], \"a\": \"é\"}").unwrap(),
            "{\n  \"z\": [\n    1,\n    {\n      \"b\": null,\n      \"a\": true\n    }\n  ],\n  \"a\": \"é\"\n}"
        );
        for falsy in ["{}", "[]", "0", "\"\"", "false", "null"] {
            assert_eq!(profile_text(falsy), None, "{falsy}");
        }
        assert_eq!(profile_text("0.5").unwrap(), "0.5");
        assert_eq!(
            profile_text("[1e-5, 1.5e300]").unwrap(),
            "[\n  1e-05,\n  1.5e+300\n]"
        );
    }

    #[test]
    fn dumps_unicode_writes_as_python_with_the_named_key_order() {
        let value =
            serde_json::json!([{"checklist_id": 0, "checklist_content": "Is it \"café\"?\n"}, 1.5]);
        assert_eq!(
            dumps_unicode(&value, &["checklist_id", "checklist_content"]),
            "[{\"checklist_id\": 0, \"checklist_content\": \"Is it \\\"café\\\"?\\n\"}, 1.5]"
        );
    }

    #[test]
    fn ascii_strings_escape_as_python_json_dumps_does() {
        // json.dumps('a\b\f\x7f\x01é😀"\\') in Python.
        assert_eq!(
            ascii_string("a\u{8}\u{c}\u{7f}\u{1}é😀\"\\"),
            "\"a\\b\\f\\u007f\\u0001\\u00e9\\ud83d\\ude00\\\"\\\\\""
        );
    }

    #[test]
    fn the_existing_profile_argument_is_compact_and_ascii() {
        assert_eq!(profile_argument(None), "{}");
        assert_eq!(profile_argument(Some("{}")), "{}");
        assert_eq!(
            profile_argument(Some("Likes caf\u{e9} \u{1f600}")),
            "{\"raw_text_profile\": \"Likes caf\\u00e9 \\ud83d\\ude00\"}"
        );
        assert_eq!(
            profile_argument(Some("{\"b\": [1, null], \"a\": \"x\"}")),
            "{\"b\": [1, null], \"a\": \"x\"}"
        );
    }
}
