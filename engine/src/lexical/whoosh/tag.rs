//! Tagging: query text to a flat list of syntax nodes, as Whoosh's taggers do.
//!
//! At every position the taggers are tried in Whoosh's priority order (binary operators, `*:*`,
//! single quotes, `field:`, wildcards, phrases, parentheses, `NOT`/`AND`/`OR`/`REQUIRE`, boosts,
//! ranges, whitespace); text between matches becomes words. Each tagger is a direct scan of
//! Whoosh's regular expression over characters, with the searches that could run to the end of
//! the text (closing quotes, brackets) answered from tables built once, so tagging is linear.

use super::syntax::{Group, GroupKind, Node, Op, RangeNode, TextKind, TextNode};

/// Binary operators (`ANDNOT`, `ANDMAYBE`, `REQUIRE`) beyond this count stay words: each one
/// nests the query one level deeper, and Whoosh's time doubles with each (it cannot parse 30).
const MAX_BINARY_OPERATORS: usize = 64;

/// Python's `\s` (`str.isspace`): Unicode white space plus the ASCII separators 0x1C-0x1F.
pub(super) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `\w`: letters, digits and `_`.
pub(super) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The characters Whoosh's wildcard tagger takes as wildcards (`*` and question marks).
pub(super) const QUESTION_MARKS: [char; 4] = ['?', '\u{55E}', '\u{61F}', '\u{1367}'];

/// For each position, the first position at or after it satisfying a predicate (`len` if none).
fn next_where(chars: &[char], at: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut next = vec![chars.len(); chars.len() + 1];
    for i in (0..chars.len()).rev() {
        next[i] = if at(i) { i } else { next[i + 1] };
    }
    next
}

/// The text as characters with the lookup tables the taggers need.
struct Scanner {
    chars: Vec<char>,
    /// End of the run of word characters starting at each position.
    word_end: Vec<usize>,
    newline: Vec<usize>,
    double_quote: Vec<usize>,
    single_quote: Vec<usize>,
    /// A `'` followed by white space, `]`, `)`, `}` or the end.
    closing_single_quote: Vec<usize>,
    /// A `]` or `}`.
    range_close: Vec<usize>,
    /// The start of `to` in any case.
    to: Vec<usize>,
    binary_operators: usize,
}

impl Scanner {
    fn new(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let n = chars.len();
        let mut word_end = vec![n; n + 1];
        for i in (0..n).rev() {
            word_end[i] = if is_word(chars[i]) {
                word_end[i + 1]
            } else {
                i
            };
        }
        let c = |i: usize| chars.get(i).copied();
        let closing_single_quote = next_where(&chars, |i| {
            chars[i] == '\'' && c(i + 1).is_none_or(|d| is_space(d) || matches!(d, ']' | ')' | '}'))
        });
        let to = next_where(&chars, |i| {
            matches!(chars[i], 'T' | 't') && matches!(c(i + 1), Some('O' | 'o'))
        });
        Scanner {
            newline: next_where(&chars, |i| chars[i] == '\n'),
            double_quote: next_where(&chars, |i| chars[i] == '"'),
            single_quote: next_where(&chars, |i| chars[i] == '\''),
            range_close: next_where(&chars, |i| matches!(chars[i], ']' | '}')),
            closing_single_quote,
            to,
            word_end,
            chars,
            binary_operators: 0,
        }
    }

    fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).copied()
    }

    fn text(&self, from: usize, to: usize) -> String {
        self.chars[from..to].iter().collect()
    }

    fn space_at(&self, i: usize) -> bool {
        self.at(i).is_some_and(is_space)
    }

    fn space_before(&self, pos: usize) -> bool {
        pos > 0 && is_space(self.chars[pos - 1])
    }

    fn keyword_at(&self, pos: usize, word: &str) -> bool {
        let len = word.chars().count();
        pos + len <= self.chars.len()
            && self.chars[pos..pos + len].iter().copied().eq(word.chars())
            && self.space_at(pos + len)
    }

    /// The node a tagger makes at `pos` and where it ends, trying taggers in Whoosh's order.
    fn tag_at(&mut self, pos: usize) -> Option<(Node, usize)> {
        let c = self.chars[pos];
        let binary = [
            ("ANDNOT", GroupKind::AndNot),
            ("ANDMAYBE", GroupKind::AndMaybe),
        ];
        for (word, kind) in binary {
            if self.space_before(pos) && self.keyword_at(pos, word) {
                if let Some(op) = self.binary_operator(kind) {
                    return Some((op, pos + word.chars().count()));
                }
            }
        }
        if c == '*' && self.at(pos + 1) == Some(':') && self.at(pos + 2) == Some('*') {
            return Some((Node::Every, pos + 3));
        }
        if c == '\'' {
            if let Some(found) = self.single_quoted(pos) {
                return Some(found);
            }
        }
        if let Some(found) = self.fieldname(pos) {
            return Some(found);
        }
        if c == '*' || QUESTION_MARKS.contains(&c) {
            return Some((Node::Text(TextNode::new(TextKind::Wildcard, c)), pos + 1));
        }
        if c == '"' {
            if let Some(found) = self.phrase(pos) {
                return Some(found);
            }
        }
        match c {
            '(' => return Some((Node::Open, pos + 1)),
            ')' => return Some((Node::Close, pos + 1)),
            _ => {}
        }
        let after_space_or_paren =
            pos == 0 || is_space(self.chars[pos - 1]) || matches!(self.chars[pos - 1], '(' | ')');
        if after_space_or_paren && self.keyword_at(pos, "NOT") {
            return Some((Node::Op(Op::Not), pos + 3));
        }
        for (word, kind) in [("AND", GroupKind::And), ("OR", GroupKind::Or)] {
            if self.space_before(pos) && self.keyword_at(pos, word) {
                return Some((Node::Op(Op::Infix(kind)), pos + word.len()));
            }
        }
        if (pos == 0 || self.space_before(pos)) && self.keyword_at(pos, "REQUIRE") {
            if let Some(op) = self.binary_operator(GroupKind::Require) {
                return Some((op, pos + 7));
            }
        }
        if c == '^' {
            if let Some(found) = self.boost(pos) {
                return Some(found);
            }
        }
        if matches!(c, '[' | '{') {
            if let Some(found) = self.range(pos) {
                return Some(found);
            }
        }
        if is_space(c) {
            let end = (pos..self.chars.len())
                .find(|&i| !is_space(self.chars[i]))
                .unwrap_or(self.chars.len());
            return Some((Node::Space, end));
        }
        None
    }

    fn binary_operator(&mut self, kind: GroupKind) -> Option<Node> {
        if self.binary_operators >= MAX_BINARY_OPERATORS {
            return None;
        }
        self.binary_operators += 1;
        Some(Node::Op(Op::Infix(kind)))
    }

    /// `(^|(?<=\W))'(?P<text>.*?)'(?=\s|\]|[)}]|$)`
    fn single_quoted(&self, pos: usize) -> Option<(Node, usize)> {
        if pos > 0 && is_word(self.chars[pos - 1]) {
            return None;
        }
        let close = self.closing_single_quote[pos + 1];
        (close < self.chars.len() && close < self.newline[pos + 1]).then(|| {
            let text = self.text(pos + 1, close);
            (Node::Text(TextNode::new(TextKind::Word, text)), close + 1)
        })
    }

    /// `(?P<text>\w+|[*]):`
    fn fieldname(&self, pos: usize) -> Option<(Node, usize)> {
        let end = if self.chars[pos] == '*' {
            pos + 1
        } else {
            self.word_end[pos]
        };
        (end > pos && self.at(end) == Some(':')).then(|| {
            let node = Node::Fieldname {
                name: self.text(pos, end),
                original: self.text(pos, end + 1),
            };
            (node, end + 1)
        })
    }

    /// `"(?P<text>.*?)"(~(?P<slop>[1-9][0-9]*))?`
    fn phrase(&self, pos: usize) -> Option<(Node, usize)> {
        let close = self.double_quote[pos + 1];
        if close >= self.chars.len() || close > self.newline[pos + 1] {
            return None;
        }
        let mut end = close + 1;
        let mut slop = 1;
        if self.at(end) == Some('~') && self.at(end + 1).is_some_and(|d| ('1'..='9').contains(&d)) {
            let digits_end = (end + 1..self.chars.len())
                .find(|&i| !self.chars[i].is_ascii_digit())
                .unwrap_or(self.chars.len());
            slop = self.text(end + 1, digits_end).parse().unwrap_or(u32::MAX);
            end = digits_end;
        }
        let text = self.text(pos + 1, close);
        Some((
            Node::Text(TextNode::new(TextKind::Phrase { slop }, text)),
            end,
        ))
    }

    /// `\^(?P<boost>[0-9]*(\.[0-9]+)?)($|(?=[ \t\r\n)]))`; an empty number is the word `^`.
    fn boost(&self, pos: usize) -> Option<(Node, usize)> {
        let digits = |from: usize| {
            (from..self.chars.len())
                .find(|&i| !self.chars[i].is_ascii_digit())
                .unwrap_or(self.chars.len())
        };
        let mut end = digits(pos + 1);
        if self.at(end) == Some('.') && self.at(end + 1).is_some_and(|d| d.is_ascii_digit()) {
            end = digits(end + 1);
        }
        if !self
            .at(end)
            .is_none_or(|d| matches!(d, ' ' | '\t' | '\r' | '\n' | ')'))
        {
            return None;
        }
        let original = self.text(pos, end);
        let node = match self.text(pos + 1, end).parse::<f64>() {
            Ok(boost) => Node::Boost { original, boost },
            Err(_) => Node::Text(TextNode::new(TextKind::Word, original)),
        };
        Some((node, end))
    }

    /// The part of Whoosh's range expression after `to`: an optional end (`\s+'...'` or text up
    /// to the bracket) and the closing bracket. Returns the raw end and the bracket's position.
    fn range_end(&self, from: usize) -> Option<(Option<String>, usize)> {
        if self.space_at(from) {
            let quote = (from..self.chars.len())
                .find(|&i| !is_space(self.chars[i]))
                .unwrap_or(self.chars.len());
            if self.at(quote) == Some('\'') {
                let close = self.single_quote[quote + 1];
                if close < self.chars.len() {
                    if matches!(self.at(close + 1), Some(']' | '}')) {
                        return Some((Some(self.text(from, close + 1)), close + 1));
                    }
                }
            }
        }
        let bracket = *self.range_close.get(from)?;
        if bracket >= self.chars.len() {
            return None;
        }
        Some(((bracket > from).then(|| self.text(from, bracket)), bracket))
    }

    /// Whoosh's range expression: `[start TO end]`, `{...}` for exclusive bounds, where `start`
    /// is `'quoted'` or the shortest text before a `to` (in any case, even inside a word).
    fn range(&self, pos: usize) -> Option<(Node, usize)> {
        let n = self.chars.len();
        let is_to = |i: usize| i + 1 < n && self.to[i] == i;
        let mut found = None;
        if self.at(pos + 1) == Some('\'') {
            let close = self.single_quote[(pos + 2).min(n)];
            if close < n && self.space_at(close + 1) {
                let to = (close + 1..n)
                    .find(|&i| !is_space(self.chars[i]))
                    .unwrap_or(n);
                if is_to(to) {
                    found = self
                        .range_end(to + 2)
                        .map(|end| (Some(self.text(pos + 1, to)), end));
                }
            }
        }
        if found.is_none() && pos + 2 <= n {
            let to = self.to[pos + 2];
            if to < self.range_close[pos + 1] && to < n {
                found = self
                    .range_end(to + 2)
                    .map(|end| (Some(self.text(pos + 1, to)), end));
            }
        }
        if found.is_none() && is_to(pos + 1) {
            found = self.range_end(pos + 3).map(|end| (None, end));
        }
        let (start, (end, bracket)) = found?;
        let unquote = |s: &str| -> String {
            if s.starts_with('\'') && s.ends_with('\'') {
                s.chars()
                    .skip(1)
                    .take(s.chars().count().saturating_sub(2))
                    .collect()
            } else {
                s.to_string()
            }
        };
        let node = RangeNode {
            start: start.map(|s| unquote(s.trim_end_matches(is_space))),
            end: end.map(|s| unquote(s.trim_start_matches(is_space))),
            start_excl: self.chars[pos] == '{',
            end_excl: self.chars[bracket] == '}',
            field: None,
        };
        Some((Node::Range(node), bracket + 1))
    }
}

/// The flat group of nodes Whoosh's tagging makes of `text`.
pub(super) fn tag(text: &str) -> Group {
    let mut scanner = Scanner::new(text);
    let mut nodes = Vec::new();
    let (mut pos, mut word_start) = (0, 0);
    while pos < scanner.chars.len() {
        match scanner.tag_at(pos) {
            Some((node, end)) => {
                if word_start < pos {
                    let word = scanner.text(word_start, pos);
                    nodes.push(Node::Text(TextNode::new(TextKind::Word, word)));
                }
                nodes.push(node);
                pos = end;
                word_start = end;
            }
            None => pos += 1,
        }
    }
    if word_start < scanner.chars.len() {
        let word = scanner.text(word_start, scanner.chars.len());
        nodes.push(Node::Text(TextNode::new(TextKind::Word, word)));
    }
    Group::new(GroupKind::Or, nodes)
}
