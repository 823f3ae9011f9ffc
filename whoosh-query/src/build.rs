//! Syntax tree to query, before normalization: Whoosh's `SyntaxNode.query`.

use super::syntax::{Group, GroupKind, Node, RangeNode, TextKind, TextNode};
use super::{QueryAnalyzer, WhooshQuery};

/// How the schema's fields turn text into terms.
pub(super) struct Fields<'a> {
    /// The field unfielded text searches: analyzed text (a Whoosh `TEXT` field).
    pub default: &'a str,
    /// Every field of the schema; those other than `default` are identifiers (Whoosh `ID`),
    /// whose text is one term, as written.
    pub all: &'a [&'a str],
    pub analyzer: &'a dyn QueryAnalyzer,
}

impl Fields<'_> {
    pub fn known(&self, name: &str) -> bool {
        self.all.contains(&name)
    }

    /// The terms of `text` in `field` (Whoosh's `field.process_text` in query mode).
    fn terms(&self, field: &str, text: &str, tokenize: bool, remove_stops: bool) -> Vec<String> {
        if field == self.default {
            self.analyzer.terms(text, tokenize, remove_stops)
        } else {
            vec![text.to_string()]
        }
    }

    /// The query of a node, `None` when it has nothing to search for.
    pub fn query(&self, node: &Node) -> Option<WhooshQuery> {
        match node {
            Node::Text(t) => self.text_query(t),
            Node::Range(r) => Some(self.range_query(r)),
            Node::Group(g) => self.group_query(g),
            Node::Every => Some(WhooshQuery::Every {
                field: String::new(),
                boost: 1.0,
            }),
            // Operators, markers and field names are all consumed by the filters.
            _ => None,
        }
    }

    fn field(&self, field: &Option<String>) -> String {
        field.clone().unwrap_or_else(|| self.default.to_string())
    }

    fn text_query(&self, node: &TextNode) -> Option<WhooshQuery> {
        let field = self.field(&node.field);
        let boost = node.boost as f32;
        if let TextKind::Phrase { slop } = node.kind {
            let words = self.terms(&field, &node.text, true, true);
            return Some(WhooshQuery::Phrase {
                field,
                words,
                slop,
                boost,
            });
        }
        let word = node.kind == TextKind::Word;
        let mut texts = self.terms(&field, &node.text, word, word);
        let make = |field: String, text: String| match node.kind {
            TextKind::Wildcard => WhooshQuery::Wildcard {
                field,
                pattern: text,
                boost,
            },
            TextKind::Prefix => WhooshQuery::Prefix {
                field,
                prefix: text,
                boost,
            },
            _ => WhooshQuery::Term { field, text, boost },
        };
        match texts.len() {
            0 => None,
            1 => texts.pop().map(|text| make(field, text)),
            // Several terms from one word: the parser's default group (OR) of them.
            _ => Some(WhooshQuery::Or(
                texts.into_iter().map(|t| make(field.clone(), t)).collect(),
                1.0,
            )),
        }
    }

    fn range_query(&self, node: &RangeNode) -> WhooshQuery {
        let field = self.field(&node.field);
        let bound = |b: &Option<String>| match b {
            Some(text) if !text.is_empty() => {
                self.terms(&field, text, false, false).into_iter().next()
            }
            other => other.clone(),
        };
        WhooshQuery::Range {
            start: bound(&node.start),
            end: bound(&node.end),
            start_excl: node.start_excl,
            end_excl: node.end_excl,
            boost: 1.0,
            field,
        }
    }

    fn group_query(&self, group: &Group) -> Option<WhooshQuery> {
        let boost = group.boost as f32;
        let binary = |make: fn(Box<WhooshQuery>, Box<WhooshQuery>) -> WhooshQuery| {
            let a = group.nodes.first().and_then(|n| self.query(n));
            let b = group.nodes.get(1).and_then(|n| self.query(n));
            Some(match (a, b) {
                (None, None) => WhooshQuery::Null,
                (Some(q), None) | (None, Some(q)) => q,
                (Some(a), Some(b)) => make(Box::new(a), Box::new(b)),
            })
        };
        match group.kind {
            GroupKind::Or => Some(WhooshQuery::Or(self.subqueries(group), boost)),
            GroupKind::And => Some(WhooshQuery::And(self.subqueries(group), boost)),
            GroupKind::AndNot => binary(WhooshQuery::AndNot),
            GroupKind::AndMaybe => binary(WhooshQuery::AndMaybe),
            GroupKind::Require => binary(WhooshQuery::Require),
            // Whoosh raises IndexError on a NOT left with nothing (`NOT NOT a`, `NOT AND b`);
            // here that clause is dropped.
            GroupKind::Not => group
                .nodes
                .first()
                .and_then(|n| self.query(n))
                .filter(truthy)
                .map(|q| WhooshQuery::Not(Box::new(q), 1.0)),
        }
    }

    fn subqueries(&self, group: &Group) -> Vec<WhooshQuery> {
        group.nodes.iter().filter_map(|n| self.query(n)).collect()
    }
}

/// Python's truth value of a query: an empty `And`/`Or` is false.
pub(super) fn truthy(q: &WhooshQuery) -> bool {
    !matches!(q, WhooshQuery::Or(subs, _) | WhooshQuery::And(subs, _) if subs.is_empty())
}
