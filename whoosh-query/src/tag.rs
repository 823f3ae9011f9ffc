//! Tagging: query text to a flat list of syntax nodes, as Whoosh's taggers do.
//!
//! At every position the taggers are tried in Whoosh's priority order (binary operators, `*:*`,
//! single quotes, `field:`, wildcards, phrases, parentheses, `NOT`/`AND`/`OR`/`REQUIRE`, boosts,
//! ranges, whitespace); text between matches becomes words. Each tagger is a direct scan of
//! Whoosh's regular expression over characters, with the searches that could run to the end of
//! the text (closing quotes, brackets) answered from tables built once, so tagging is linear.

use std::cell::Cell;

use super::syntax::{Group, GroupKind, Node, Op, RangeNode, TextKind, TextNode, QUESTION_MARKS};

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

/// Characters a lookahead searches for.
#[derive(Clone, Copy)]
enum Target {
    Newline,
    DoubleQuote,
    SingleQuote,
    /// A `'` followed by white space, `]`, `)`, `}` or the end.
    ClosingSingleQuote,
    /// A `]` or `}`.
    RangeClose,
    /// The start of `to` in any case.
    To,
}

const TARGETS: usize = 6;

/// The text as characters, with the last answer of each forward search kept: taggers search
/// from positions that mostly grow, so each search resumes where the previous one stopped and
/// tagging stays linear.
struct Scanner {
    chars: Vec<char>,
    /// Per target: `(from, found)`, no match in `from..found` and a match at `found` (or the end).
    searches: [Cell<(usize, usize)>; TARGETS],
    binary_operators: usize,
}

impl Scanner {
    fn new(text: &str) -> Self {
        Scanner {
            chars: text.chars().collect(),
            searches: Default::default(),
            binary_operators: 0,
        }
    }

    fn is(&self, target: Target, i: usize) -> bool {
        let c = self.chars[i];
        match target {
            Target::Newline => c == '\n',
            Target::DoubleQuote => c == '"',
            Target::SingleQuote => c == '\'',
            Target::ClosingSingleQuote => {
                c == '\''
                    && self
                        .at(i + 1)
                        .is_none_or(|d| is_space(d) || matches!(d, ']' | ')' | '}'))
            }
            Target::RangeClose => matches!(c, ']' | '}'),
            Target::To => matches!(c, 'T' | 't') && matches!(self.at(i + 1), Some('O' | 'o')),
        }
    }

    /// The first position at or after `from` holding `target`, the text's length if none.
    fn next(&self, target: Target, from: usize) -> usize {
        let n = self.chars.len();
        let search = &self.searches[target as usize];
        let (known_from, found) = search.get();
        if from >= n {
            return n;
        }
        if known_from <= from && from <= found && found <= n && known_from < found {
            return found;
        }
        // Scan, stopping early on reaching the known match-free stretch.
        let mut i = from;
        while i < n && !self.is(target, i) {
            if i == known_from && known_from < found {
                i = found;
                break;
            }
            i += 1;
        }
        search.set((from, i));
        i
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
        let len = word.len();
        pos + len <= self.chars.len()
            && self.chars[pos..pos + len].iter().copied().eq(word.chars())
            && self.space_at(pos + len)
    }

    /// The node a tagger makes at `pos` and where it ends, trying taggers in Whoosh's order.
    /// `untagged_before`: whether the character before `pos` was tried and matched nothing.
    fn tag_at(&mut self, pos: usize, untagged_before: bool) -> Option<(Node, usize)> {
        let c = self.chars[pos];
        // Inside a word only `field:` and keywords could start, and both failed at the word's
        // first character already (a keyword needs a space before it).
        if untagged_before && is_word(c) && is_word(self.chars[pos - 1]) {
            return None;
        }
        let binary = [
            ("ANDNOT", GroupKind::AndNot),
            ("ANDMAYBE", GroupKind::AndMaybe),
        ];
        for (word, kind) in binary {
            if c == 'A' && self.space_before(pos) && self.keyword_at(pos, word) {
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
        if c == 'N' && after_space_or_paren && self.keyword_at(pos, "NOT") {
            return Some((Node::Op(Op::Not), pos + 3));
        }
        for (word, kind) in [("AND", GroupKind::And), ("OR", GroupKind::Or)] {
            if word.starts_with(c) && self.space_before(pos) && self.keyword_at(pos, word) {
                return Some((Node::Op(Op::Infix(kind)), pos + word.len()));
            }
        }
        if c == 'R' && (pos == 0 || self.space_before(pos)) && self.keyword_at(pos, "REQUIRE") {
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
        let close = self.next(Target::ClosingSingleQuote, pos + 1);
        (close < self.chars.len() && close < self.next(Target::Newline, pos + 1)).then(|| {
            let text = self.text(pos + 1, close);
            (Node::Text(TextNode::new(TextKind::Word, text)), close + 1)
        })
    }

    /// `(?P<text>\w+|[*]):`
    fn fieldname(&self, pos: usize) -> Option<(Node, usize)> {
        let end = if self.chars[pos] == '*' {
            pos + 1
        } else {
            (pos..self.chars.len())
                .find(|&i| !is_word(self.chars[i]))
                .unwrap_or(self.chars.len())
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
        let close = self.next(Target::DoubleQuote, pos + 1);
        if close >= self.chars.len() || close > self.next(Target::Newline, pos + 1) {
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
                let close = self.next(Target::SingleQuote, quote + 1);
                if close < self.chars.len() && matches!(self.at(close + 1), Some(']' | '}')) {
                    return Some((Some(self.text(from, close + 1)), close + 1));
                }
            }
        }
        let bracket = self.next(Target::RangeClose, from);
        if bracket >= self.chars.len() {
            return None;
        }
        Some(((bracket > from).then(|| self.text(from, bracket)), bracket))
    }

    /// Whoosh's range expression: `[start TO end]`, `{...}` for exclusive bounds, where `start`
    /// is `'quoted'` or the shortest text before a `to` (in any case, even inside a word).
    fn range(&self, pos: usize) -> Option<(Node, usize)> {
        let n = self.chars.len();
        let is_to = |i: usize| i + 1 < n && self.is(Target::To, i);
        let mut found = None;
        if self.at(pos + 1) == Some('\'') {
            let close = self.next(Target::SingleQuote, pos + 2);
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
            let to = self.next(Target::To, pos + 2);
            if to < self.next(Target::RangeClose, pos + 1) && to < n {
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
        Some((Node::Range(Box::new(node)), bracket + 1))
    }
}

/// The flat group of nodes Whoosh's tagging makes of `text`.
pub(super) fn tag(text: &str) -> Group {
    let mut scanner = Scanner::new(text);
    let mut nodes = Vec::new();
    let (mut pos, mut word_start) = (0, 0);
    while pos < scanner.chars.len() {
        match scanner.tag_at(pos, word_start < pos) {
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
