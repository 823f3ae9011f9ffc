//! A module-level dictionary of string keys to lists of strings, read from Python source
//! without running it: `NAME = {'key': ['value', …], …}`, as upstream writes its lexicons
//! (JuDGE's keyword-to-charge tables). Keys keep the order Python's dict gives them: a key
//! written twice stays where it first stood and takes its last list.

use super::literal::Literal;
use super::scan::{logical_lines, ScanError, Token};

/// One entry of a dictionary of string lists: the key's literal and the items' literals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrListEntry {
    /// The key as written.
    pub key: Literal,
    /// The list's items as written, in order.
    pub items: Vec<Literal>,
}

/// The dictionary assigned to `name` at module level in `source`, entries in Python's order
/// (a repeated key keeps its first place and its last list); `Ok(None)` when no module-level
/// line assigns a dictionary to `name`.
pub fn str_list_dict(source: &str, name: &str) -> Result<Option<Vec<StrListEntry>>, ScanError> {
    for line in logical_lines(source)? {
        if line.indent != 0 {
            continue;
        }
        let tokens = &line.tokens;
        let assigns = matches!(tokens.first(), Some((Token::Name(n), _)) if n == name)
            && matches!(tokens.get(1), Some((Token::Op(op), _)) if op == "=")
            && matches!(tokens.get(2), Some((Token::Open('{'), _)));
        if assigns {
            let at = tokens.get(2).map_or(1, |t| t.1);
            return parse_entries(&tokens[3..], at).map(Some);
        }
    }
    Ok(None)
}

/// The entries after the opening brace, up to its closing one.
fn parse_entries(tokens: &[(Token, usize)], line: usize) -> Result<Vec<StrListEntry>, ScanError> {
    let fail = |at: usize, message: &str| ScanError {
        line: tokens.get(at).map_or(line, |t| t.1),
        message: message.to_string(),
    };
    let mut entries: Vec<StrListEntry> = Vec::new();
    let mut at = 0;
    loop {
        let key = match tokens.get(at) {
            Some((Token::Close, _)) => return Ok(entries),
            Some((Token::Str(key), _)) => key.clone(),
            _ => return Err(fail(at, "a dictionary key is not a string literal")),
        };
        if !matches!(tokens.get(at + 1), Some((Token::Op(op), _)) if op == ":") {
            return Err(fail(at + 1, "a dictionary key is not followed by ':'"));
        }
        if !matches!(tokens.get(at + 2), Some((Token::Open('['), _))) {
            return Err(fail(at + 2, "a dictionary value is not a list"));
        }
        at += 3;
        let mut items = Vec::new();
        loop {
            match tokens.get(at) {
                Some((Token::Close, _)) => {
                    at += 1;
                    break;
                }
                Some((Token::Str(item), _)) => {
                    items.push(item.clone());
                    at += 1;
                    match tokens.get(at) {
                        Some((Token::Comma, _)) => at += 1,
                        Some((Token::Close, _)) => {}
                        _ => return Err(fail(at, "a list item is not followed by ',' or ']'")),
                    }
                }
                _ => return Err(fail(at, "a list item is not a string literal")),
            }
        }
        let value = key.pieces(false, &mut 0).ok();
        let same_key = entries
            .iter_mut()
            .find(|entry| entry.key.pieces(false, &mut 0).ok() == value);
        match same_key {
            Some(entry) => entry.items = items,
            None => entries.push(StrListEntry { key, items }),
        }
        match tokens.get(at) {
            Some((Token::Comma, _)) => at += 1,
            Some((Token::Close, _)) => {}
            _ => return Err(fail(at, "a dictionary entry is not followed by ',' or '}'")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bodies(entries: &[StrListEntry]) -> Vec<(String, Vec<String>)> {
        entries
            .iter()
            .map(|e| {
                let items = e.items.iter().map(|l| l.body.clone()).collect();
                (e.key.body.clone(), items)
            })
            .collect()
    }

    #[test]
    fn reads_a_dictionary_of_lists_with_python_key_order() {
        let source =
            "x = 1\nD = {\n    'a': ['1', \"2\"],  # note\n    'b': [],\n    'a': ['3'],\n}\n\
                      def f():\n    D = {'z': ['q']}\n";
        let entries = str_list_dict(source, "D").unwrap().unwrap();
        assert_eq!(
            bodies(&entries),
            vec![
                ("a".to_string(), vec!["3".to_string()]),
                ("b".to_string(), vec![])
            ]
        );
        assert_eq!(str_list_dict(source, "E").unwrap(), None);
    }

    #[test]
    fn other_values_are_refused() {
        assert!(str_list_dict("D = {'a': 'b'}\n", "D").is_err());
        assert!(str_list_dict("D = {'a': [1]}\n", "D").is_err());
        assert!(str_list_dict("D = {1: ['a']}\n", "D").is_err());
    }
}
