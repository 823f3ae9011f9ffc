//! INTERIM (replaced by the parser branch): words, trailing wildcards, OR.
use super::{QueryAnalyzer, WhooshQuery};
use crate::namespace::Analyzer;

impl QueryAnalyzer for Analyzer {
    fn terms(&self, text: &str, tokenize: bool, remove_stops: bool) -> Vec<String> {
        if tokenize && remove_stops {
            return self.analyze(text).into_iter().map(|t| t.text).collect();
        }
        vec![text.to_lowercase()]
    }
}

/// Parses `text`.
pub fn parse(
    text: &str,
    default_field: &str,
    _fields: &[&str],
    analyzer: &dyn QueryAnalyzer,
) -> WhooshQuery {
    let mut subs = Vec::new();
    for word in text.split_whitespace() {
        if word.contains('?') || word.contains('*') {
            let trimmed: String = word
                .trim_matches(|c: char| !c.is_alphanumeric() && c != '?' && c != '*')
                .to_string();
            subs.push(WhooshQuery::Wildcard {
                field: default_field.into(),
                pattern: analyzer.terms(&trimmed, false, false).concat(),
                boost: 1.0,
            });
        } else {
            for t in analyzer.terms(word, true, true) {
                subs.push(WhooshQuery::Term {
                    field: default_field.into(),
                    text: t,
                    boost: 1.0,
                });
            }
        }
    }
    WhooshQuery::Or(subs, 1.0)
}
