//! Finding the JSON in what a model wrote.
//!
//! Models asked for JSON wrap it in code fences, add a sentence before or after, write Python
//! literals (`True`, `None`, single quotes) or leave trailing commas. [`extract_json`] accepts
//! all of that and returns the first JSON object or array that parses.

use mb_core::pyliteral::parse_model_literal;
use serde_json::Value;

/// The first JSON object or array in `text`, tolerating fences, prose, Python literals and
/// trailing commas; `None` when there is none.
pub fn extract_json(text: &str) -> Option<Value> {
    let text = crate::think::strip_think(text);
    fenced_blocks(&text)
        .into_iter()
        .chain(std::iter::once(text.as_str()))
        .find_map(first_value)
}

/// Contents of ```` ``` ```` fenced blocks, in order.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        // Skip the info string (`json`, `python`) up to the end of the line.
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        match body.find("```") {
            Some(end) => {
                blocks.push(&body[..end]);
                rest = &body[end + 3..];
            }
            None => {
                blocks.push(body);
                break;
            }
        }
    }
    blocks
}

/// Brackets nested deeper than this are not read as a value (serde_json's own limit).
const MAX_DEPTH: usize = 128;

/// Starts tried at most: a reply with more brackets before its value is not one to read.
const MAX_STARTS: usize = 256;

/// Tries every `{` or `[` in turn (up to [`MAX_STARTS`]) as the start of a value. A bracketed
/// run nested deeper than [`MAX_DEPTH`] is skipped whole, so hostile text costs time linear in
/// its length.
fn first_value(text: &str) -> Option<Value> {
    let mut from = 0;
    for _ in 0..MAX_STARTS {
        let offset = text[from..].find(['{', '['])?;
        let start = from + offset;
        match balanced(&text[start..]) {
            Some((candidate, depth)) if depth <= MAX_DEPTH => {
                let parsed = parse_model_literal(candidate).ok();
                if parsed.is_some() {
                    return parsed;
                }
                from = start + 1;
            }
            Some((candidate, _)) => from = start + candidate.len(),
            None => from = start + 1,
        }
    }
    None
}

/// The prefix of `text` (which starts with a bracket) up to its matching closing bracket,
/// skipping brackets inside single- or double-quoted strings, with its deepest nesting.
fn balanced(text: &str) -> Option<(&str, usize)> {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' | '[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some((&text[..=i], deepest));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::extract_json;
    use serde_json::json;

    #[test]
    fn plain_fenced_and_embedded_json() {
        assert_eq!(extract_json(r#"{"a": 1}"#), Some(json!({"a": 1})));
        assert_eq!(
            extract_json("Here you go:\n```json\n{\"facts\": [\"likes tea\"]}\n```\nDone."),
            Some(json!({"facts": ["likes tea"]}))
        );
        assert_eq!(
            extract_json("The answer is [1, 2, 3] as requested."),
            Some(json!([1, 2, 3]))
        );
        assert_eq!(
            extract_json("<think>maybe {\"x\": 0}?</think>{\"x\": 1}"),
            Some(json!({"x": 1}))
        );
    }

    #[test]
    fn python_literals_and_trailing_commas() {
        assert_eq!(
            extract_json("{'keep': True, 'gone': None, 'no': False, 'list': ['a', 'b',],}"),
            Some(json!({"keep": true, "gone": null, "no": false, "list": ["a", "b"]}))
        );
        assert_eq!(
            extract_json(r#"{'quote': 'she said "hi"', 'apostrophe': 'it\'s'}"#),
            Some(json!({"quote": "she said \"hi\"", "apostrophe": "it's"}))
        );
        // JSON words inside a Python literal, and Python escapes.
        assert_eq!(
            extract_json(r"{'ok': true, 'none': null, 'tab': 'a\tb', 'hex': '\x41'}"),
            Some(json!({"ok": true, "none": null, "tab": "a\tb", "hex": "A"}))
        );
        assert_eq!(extract_json("[True, undefined]"), None);
        // Words that merely contain True/None stay as they are.
        assert_eq!(
            extract_json("{'name': 'Nonesuch', 'v': 'TrueColor'}"),
            Some(json!({"name": "Nonesuch", "v": "TrueColor"}))
        );
    }

    #[test]
    fn brackets_inside_strings_and_broken_prefixes() {
        assert_eq!(
            extract_json(r#"{"text": "a } tricky ] string"}"#),
            Some(json!({"text": "a } tricky ] string"}))
        );
        // An unparsable bracketed phrase before the real value is skipped.
        assert_eq!(
            extract_json("[see below] {\"ok\": true}"),
            Some(json!({"ok": true}))
        );
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(extract_json("{\"truncated\": [1, 2"), None);
    }

    #[test]
    fn hostile_nesting_is_refused_without_overflow() {
        for hostile in [
            format!("{}{}", "[".repeat(200_000), "]".repeat(200_000)),
            "[".repeat(200_000),
            format!("{}{{\"a\": 1}}", "{".repeat(100_000)),
        ] {
            assert_eq!(extract_json(&hostile), None);
        }
        let deep_then_value = format!("{}{} {{\"ok\": 1}}", "[".repeat(300), "]".repeat(300));
        assert_eq!(extract_json(&deep_then_value), Some(json!({"ok": 1})));
    }
}
