//! Python source to the string literals it holds, each with where it stands: the `def`/`class`
//! scope around it and what it is bound to (assigned to a name, passed as a keyword, returned,
//! an item of a named list).
//!
//! A tokenizer, not a parser: it follows what decides those facts (strings with their
//! prefixes and quotes, comments, brackets, line continuations, indentation) and nothing else.
//! Adjacent literals are one run, as Python concatenates them.

use super::literal::Literal;

/// What a run of literals is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// `name = "…"`, or `name="…"` as a keyword argument.
    Assigned(String),
    /// `return "…"`.
    Returned,
    /// The `index`-th string item of `name = [ … ]`.
    ListItem {
        /// The list's name.
        name: String,
        /// 0-based among the list's string items.
        index: usize,
    },
    /// Anything else (docstrings, dictionary keys, call arguments).
    Other,
}

/// One run of adjacent string literals.
#[derive(Debug, Clone)]
pub struct StringRun {
    /// Enclosing `class` and `def` names joined by `.`; empty at module level.
    pub scope: String,
    /// What the run is bound to.
    pub binding: Binding,
    /// The literals, in order.
    pub literals: Vec<Literal>,
    /// 1-based line of the first literal.
    pub line: usize,
}

/// Why a file could not be scanned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ScanError {
    /// 1-based line of the problem.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Name(String),
    Op(String),
    Open(char),
    Close,
    Comma,
    Str(Literal),
    Number,
}

pub(super) struct LogicalLine {
    pub(super) indent: usize,
    pub(super) tokens: Vec<(Token, usize)>,
}

/// Every string run of `source`, in order.
pub fn string_runs(source: &str) -> Result<Vec<StringRun>, ScanError> {
    let lines = logical_lines(source)?;
    let mut scopes: Vec<(usize, String)> = Vec::new();
    let mut runs = Vec::new();
    for line in lines {
        while scopes
            .last()
            .is_some_and(|(indent, _)| *indent >= line.indent)
        {
            scopes.pop();
        }
        let scope = scopes
            .iter()
            .map(|(_, name)| name.as_str())
            .collect::<Vec<_>>()
            .join(".");
        runs_of_line(&line, &scope, &mut runs);
        if let Some(name) = defined_name(&line.tokens) {
            scopes.push((line.indent, name));
        }
    }
    Ok(runs)
}

/// The name a `def`, `async def` or `class` line defines.
fn defined_name(tokens: &[(Token, usize)]) -> Option<String> {
    let mut words = tokens.iter().map(|(t, _)| t);
    let mut first = words.next()?;
    if *first == Token::Name("async".into()) {
        first = words.next()?;
    }
    match (first, words.next()?) {
        (Token::Name(keyword), Token::Name(name)) if keyword == "def" || keyword == "class" => {
            Some(name.clone())
        }
        _ => None,
    }
}

/// The runs of one logical line, with their bindings.
fn runs_of_line(line: &LogicalLine, scope: &str, runs: &mut Vec<StringRun>) {
    let tokens = &line.tokens;
    // For each open bracket: the list name it opens (`name = [`) and its string items so far.
    let mut brackets: Vec<Option<(String, usize)>> = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        match &tokens[at].0 {
            Token::Open(bracket) => {
                let list = (*bracket == '[')
                    .then(|| assigned_name(tokens, at))
                    .flatten()
                    .map(|name| (name, 0));
                brackets.push(list);
                at += 1;
            }
            Token::Close => {
                brackets.pop();
                at += 1;
            }
            Token::Str(_) => {
                let start = at;
                let mut literals = Vec::new();
                while let Some((Token::Str(literal), _)) = tokens.get(at) {
                    literals.push(literal.clone());
                    at += 1;
                }
                let binding = binding_of(tokens, start, at, brackets.last_mut());
                runs.push(StringRun {
                    scope: scope.to_string(),
                    binding,
                    literals,
                    line: tokens[start].1,
                });
            }
            _ => at += 1,
        }
    }
}

/// The name assigned by `name =` just before token `at` (skipping opening parentheses).
fn assigned_name(tokens: &[(Token, usize)], at: usize) -> Option<String> {
    let mut before = at;
    while before > 0 && tokens[before - 1].0 == Token::Open('(') {
        before -= 1;
    }
    if before < 2 || tokens[before - 1].0 != Token::Op("=".into()) {
        return None;
    }
    match &tokens[before - 2].0 {
        Token::Name(name) => Some(name.clone()),
        _ => None,
    }
}

fn binding_of(
    tokens: &[(Token, usize)],
    start: usize,
    end: usize,
    list: Option<&mut Option<(String, usize)>>,
) -> Binding {
    if let Some(name) = assigned_name(tokens, start) {
        return Binding::Assigned(name);
    }
    let mut before = start;
    while before > 0 && tokens[before - 1].0 == Token::Open('(') {
        before -= 1;
    }
    if before == 1 && tokens[0].0 == Token::Name("return".into()) {
        return Binding::Returned;
    }
    if let Some(Some((name, count))) = list {
        let item_start = matches!(tokens[start - 1].0, Token::Open('[') | Token::Comma);
        let item_end = matches!(
            tokens.get(end).map(|t| &t.0),
            Some(Token::Comma | Token::Close)
        );
        if item_start && item_end {
            let index = *count;
            *count += 1;
            return Binding::ListItem {
                name: name.clone(),
                index,
            };
        }
    }
    Binding::Other
}

/// Splits `source` into logical lines of tokens.
pub(super) fn logical_lines(source: &str) -> Result<Vec<LogicalLine>, ScanError> {
    let chars: Vec<(usize, char)> = source.char_indices().collect();
    let mut lines = Vec::new();
    let mut current: Option<LogicalLine> = None;
    let mut depth = 0usize;
    let mut line_no = 1;
    let mut i = 0;
    let mut at_line_start = true;
    while i < chars.len() {
        let c = chars[i].1;
        if at_line_start && depth == 0 && current.is_none() {
            // Indentation of a new logical line (blank and comment-only lines have none).
            let mut indent = 0;
            while let Some(&(_, w)) = chars.get(i) {
                match w {
                    ' ' => indent += 1,
                    '\t' => indent = (indent / 8 + 1) * 8,
                    '\x0c' => indent = 0,
                    _ => break,
                }
                i += 1;
            }
            at_line_start = false;
            match chars.get(i).map(|&(_, c)| c) {
                None | Some('\n') | Some('#') | Some('\r') => {}
                Some(_) => {
                    current = Some(LogicalLine {
                        indent,
                        tokens: Vec::new(),
                    })
                }
            }
            continue;
        }
        match c {
            '\n' => {
                line_no += 1;
                i += 1;
                if depth == 0 {
                    if let Some(line) = current.take() {
                        lines.push(line);
                    }
                    at_line_start = true;
                }
            }
            ' ' | '\t' | '\r' | '\x0c' => i += 1,
            '#' => {
                while i < chars.len() && chars[i].1 != '\n' {
                    i += 1;
                }
            }
            '\\' if chars.get(i + 1).map(|&(_, c)| c) == Some('\n') => {
                line_no += 1;
                i += 2;
            }
            '\\' if chars.get(i + 1).map(|&(_, c)| c) == Some('\r') => i += 1,
            _ => {
                let (token, next, newlines) = token_at(source, &chars, i, line_no)?;
                match token {
                    Token::Open(_) => depth += 1,
                    Token::Close => depth = depth.saturating_sub(1),
                    _ => {}
                }
                let line = current.get_or_insert_with(|| LogicalLine {
                    indent: 0,
                    tokens: Vec::new(),
                });
                line.tokens.push((token, line_no));
                line_no += newlines;
                i = next;
            }
        }
    }
    if let Some(line) = current.take() {
        lines.push(line);
    }
    Ok(lines)
}

/// The token starting at `chars[i]`, the index after it, and the newlines inside it.
fn token_at(
    source: &str,
    chars: &[(usize, char)],
    i: usize,
    line: usize,
) -> Result<(Token, usize, usize), ScanError> {
    let c = chars[i].1;
    if c == '"' || c == '\'' {
        return string_at(source, chars, i, i, line);
    }
    if c.is_alphabetic() || c == '_' {
        let mut end = i;
        while end < chars.len() && (chars[end].1.is_alphanumeric() || chars[end].1 == '_') {
            end += 1;
        }
        let word: String = chars[i..end].iter().map(|&(_, c)| c).collect();
        let quote_follows = matches!(chars.get(end).map(|&(_, c)| c), Some('"' | '\''));
        if quote_follows && Literal::is_prefix(&word) {
            return string_at(source, chars, i, end, line);
        }
        return Ok((Token::Name(word), end, 0));
    }
    if c.is_ascii_digit() {
        let mut end = i;
        while end < chars.len()
            && (chars[end].1.is_alphanumeric() || matches!(chars[end].1, '.' | '_'))
        {
            end += 1;
        }
        return Ok((Token::Number, end, 0));
    }
    let simple = match c {
        '(' | '[' | '{' => Some(Token::Open(c)),
        ')' | ']' | '}' => Some(Token::Close),
        ',' => Some(Token::Comma),
        '.' | ';' => Some(Token::Op(c.to_string())),
        _ => None,
    };
    if let Some(token) = simple {
        return Ok((token, i + 1, 0));
    }
    const OPERATOR: &str = "=!<>+-*/%&|^:@~";
    let mut end = i;
    while end < chars.len() && OPERATOR.contains(chars[end].1) {
        end += 1;
    }
    if end == i {
        end = i + 1;
    }
    let op: String = chars[i..end].iter().map(|&(_, c)| c).collect();
    Ok((Token::Op(op), end, 0))
}

/// The string literal whose prefix starts at `chars[start]` and whose quote is at `chars[quote]`.
fn string_at(
    source: &str,
    chars: &[(usize, char)],
    start: usize,
    quote: usize,
    line: usize,
) -> Result<(Token, usize, usize), ScanError> {
    let q = chars[quote].1;
    let triple = chars.get(quote + 1).map(|&(_, c)| c) == Some(q)
        && chars.get(quote + 2).map(|&(_, c)| c) == Some(q);
    let body_start = if triple { quote + 3 } else { quote + 1 };
    let mut i = body_start;
    let mut newlines = 0;
    loop {
        let Some(&(_, c)) = chars.get(i) else {
            return Err(ScanError {
                line,
                message: "a string literal is not closed".into(),
            });
        };
        if c == '\\' {
            if chars.get(i + 1).map(|&(_, c)| c) == Some('\n') {
                newlines += 1;
            }
            i += 2;
            continue;
        }
        if c == '\n' {
            if !triple {
                return Err(ScanError {
                    line,
                    message: "a single-quoted string literal runs past its line".into(),
                });
            }
            newlines += 1;
        }
        if c == q {
            let closes = !triple
                || (chars.get(i + 1).map(|&(_, c)| c) == Some(q)
                    && chars.get(i + 2).map(|&(_, c)| c) == Some(q));
            if closes {
                let end = if triple { i + 3 } else { i + 1 };
                let byte = |index: usize| chars.get(index).map_or(source.len(), |&(b, _)| b);
                let literal = Literal {
                    prefix: source[byte(start)..byte(quote)].to_string(),
                    body: source[byte(body_start)..byte(i)].to_string(),
                    source: source[byte(start)..byte(end)].to_string(),
                };
                return Ok((Token::Str(literal), end, newlines));
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bindings(source: &str) -> Vec<(String, Binding, String)> {
        string_runs(source)
            .unwrap()
            .into_iter()
            .map(|run| {
                let body: String = run.literals.iter().map(|l| l.body.as_str()).collect();
                (run.scope, run.binding, body)
            })
            .collect()
    }

    #[test]
    fn scopes_and_bindings() {
        let source = r#"
TOP = "module"

class Agent:
    """Doc."""
    def answer(self, lang):
        if lang == "en":
            prompt = f"""Context:
{context}"""
        else:
            prompt = ("a"
                # comment with "quotes"
                'b')
        return call(x,
            persona="kw", items=["one", "two" , 3, "three"])

    def other(self):
        return "ret"

after = 'tail'
"#;
        let found = bindings(source);
        let expect = |scope: &str, binding: Binding, body: &str| {
            assert!(
                found.contains(&(scope.to_string(), binding.clone(), body.to_string())),
                "missing {scope} {binding:?} {body:?} in {found:#?}"
            );
        };
        expect("", Binding::Assigned("TOP".into()), "module");
        expect("Agent", Binding::Other, "Doc.");
        expect("Agent.answer", Binding::Other, "en");
        expect(
            "Agent.answer",
            Binding::Assigned("prompt".into()),
            "Context:\n{context}",
        );
        expect("Agent.answer", Binding::Assigned("prompt".into()), "ab");
        expect("Agent.answer", Binding::Assigned("persona".into()), "kw");
        for (index, item) in ["one", "two", "three"].into_iter().enumerate() {
            let binding = Binding::ListItem {
                name: "items".into(),
                index,
            };
            expect("Agent.answer", binding, item);
        }
        expect("Agent.other", Binding::Returned, "ret");
        expect("", Binding::Assigned("after".into()), "tail");
    }

    #[test]
    fn quotes_inside_strings_and_escapes_do_not_end_them() {
        let found = bindings("x = 'it\\'s'\ny = \"\"\"a \"quoted\" \\\"\"\" b\"\"\"\n");
        assert_eq!(found[0].2, "it\\'s");
        assert_eq!(found[1].2, "a \"quoted\" \\\"\"\" b");
    }

    #[test]
    fn an_unclosed_string_names_its_line() {
        let error = string_runs("a = 1\nb = 'open\n").unwrap_err();
        assert_eq!(error.line, 2);
    }
}
