//! Scoring a [`WhooshQuery`] the way Whoosh's searcher does.
//!
//! Whoosh adds up the scores of the subqueries that match (`Or`, `And`, phrases), gives
//! negations and `*` a constant 1, and scores a multi-term query (wildcard, prefix, range) by
//! how its `Or` of expanded terms is matched:
//!
//! - one expanded term: that term's BM25 score;
//! - two terms, or a namespace of more than 5 000 documents (and fewer than 1 024 terms): the
//!   sum of the terms' BM25 scores (a binary union of term matchers, which ignore the
//!   "constant score" request);
//! - otherwise: a constant 1 per matching document (a preloaded array union, told not to
//!   score).
//!
//! So `drive?` scores `drives` and `driver` by BM25 in a small memory with just those two
//! words, but as a flat 1 as soon as a third word matches; the parity test measures this
//! against Whoosh itself.

use std::collections::HashMap;
use std::ops::Bound;

use super::WhooshQuery;
use crate::error::Result;
use crate::record::RecordId;

/// Whoosh's document count from which multi-term queries are scored term by term.
const SCORED_EXPANSION_ABOVE_DOCS: u64 = 5_000;
/// Whoosh's `Or.TOO_MANY_CLAUSES`: from this many expanded terms they are never scored.
const TOO_MANY_CLAUSES: usize = 1_024;

/// What scoring a query needs from one namespace's lexical field.
pub(crate) trait Postings {
    /// Live documents in the namespace.
    fn num_docs(&self) -> u64;
    /// The indexed terms of the namespace from `lower` on, in order, for as long as `keep`
    /// accepts them (a range of the sorted term dictionary).
    fn terms_from(&self, lower: Bound<&str>, keep: &dyn Fn(&str) -> bool) -> Vec<String>;
    /// Every document containing `term`, with the term's BM25 score there.
    fn scored(&self, term: &str) -> Result<Vec<(RecordId, f32)>>;
    /// Every live document of the namespace.
    fn all_docs(&self) -> Result<Vec<RecordId>>;
    /// The analyzed terms of a document, in order (positions for phrases).
    fn positions(&self, id: RecordId) -> Result<Vec<String>>;
}

/// Matching documents and their scores.
type Scores = HashMap<RecordId, f32>;

/// The `k` best documents for `query` in the field `field`, best first; ties rank the older
/// record first, as Whoosh ranks the lower document number first.
pub(crate) fn top_k(
    postings: &dyn Postings,
    field: &str,
    query: &WhooshQuery,
    k: usize,
) -> Result<Vec<(RecordId, f32)>> {
    if k == 0 || postings.num_docs() == 0 {
        return Ok(Vec::new());
    }
    let scores = Evaluator { postings, field }.eval(query)?;
    let mut hits: Vec<(RecordId, f32)> = scores.into_iter().collect();
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(k);
    Ok(hits)
}

struct Evaluator<'a> {
    postings: &'a dyn Postings,
    field: &'a str,
}

impl Evaluator<'_> {
    fn eval(&self, query: &WhooshQuery) -> Result<Scores> {
        Ok(match query {
            WhooshQuery::Null => Scores::new(),
            WhooshQuery::Term { field, text, boost } => {
                if field != self.field {
                    return Ok(Scores::new());
                }
                boosted(self.term(text)?, *boost)
            }
            WhooshQuery::Wildcard {
                field,
                pattern,
                boost,
            } => {
                // Every match starts with the pattern's literal prefix: walk only those terms.
                let prefix = literal_prefix(pattern);
                self.expansion(
                    field,
                    Bound::Included(prefix),
                    &|t| t.starts_with(prefix),
                    |t| glob_match(pattern, t),
                    *boost,
                )?
            }
            WhooshQuery::Prefix {
                field,
                prefix,
                boost,
            } => self.expansion(
                field,
                Bound::Included(prefix),
                &|t| t.starts_with(prefix.as_str()),
                |_| true,
                *boost,
            )?,
            WhooshQuery::Range {
                field,
                start,
                end,
                start_excl,
                end_excl,
                boost,
            } => {
                let lower = match start.as_deref() {
                    None => Bound::Unbounded,
                    Some(s) if *start_excl => Bound::Excluded(s),
                    Some(s) => Bound::Included(s),
                };
                let below = |t: &str| {
                    end.as_deref()
                        .is_none_or(|e| if *end_excl { t < e } else { t <= e })
                };
                self.expansion(field, lower, &below, |_| true, *boost)?
            }
            WhooshQuery::Every { field, boost } => {
                if field != self.field && field != "*" {
                    return Ok(Scores::new());
                }
                self.constant(self.postings.all_docs()?, *boost)
            }
            WhooshQuery::Phrase {
                field,
                words,
                slop,
                boost,
            } => {
                if field != self.field {
                    return Ok(Scores::new());
                }
                boosted(self.phrase(words, *slop)?, *boost)
            }
            WhooshQuery::Or(subs, boost) => {
                // Summed clause by clause, in the query's order, for every document alike: one
                // search for all the plain terms would sum in tantivy's per-document order and
                // break Whoosh's exact ties differently (measured: 0.990 -> 0.988 identical
                // top-5 rankings on LoCoMo).
                let mut sum = Scores::new();
                for sub in subs {
                    for (id, score) in self.eval(sub)? {
                        *sum.entry(id).or_default() += score;
                    }
                }
                boosted(sum, *boost)
            }
            WhooshQuery::And(subs, boost) => {
                let mut subs = subs.iter();
                let Some(first) = subs.next() else {
                    return Ok(Scores::new());
                };
                let mut sum = self.eval(first)?;
                for sub in subs {
                    let next = self.eval(sub)?;
                    sum.retain(|id, _| next.contains_key(id));
                    for (id, score) in sum.iter_mut() {
                        *score += next.get(id).copied().unwrap_or_default();
                    }
                }
                boosted(sum, *boost)
            }
            WhooshQuery::AndNot(positive, negative) => {
                let mut kept = self.eval(positive)?;
                let excluded = self.eval(negative)?;
                kept.retain(|id, _| !excluded.contains_key(id));
                kept
            }
            WhooshQuery::AndMaybe(required, optional) => {
                let mut kept = self.eval(required)?;
                for (id, score) in self.eval(optional)? {
                    if let Some(total) = kept.get_mut(&id) {
                        *total += score;
                    }
                }
                kept
            }
            WhooshQuery::Require(scored, filter) => {
                let mut kept = self.eval(scored)?;
                let filter = self.eval(filter)?;
                kept.retain(|id, _| filter.contains_key(id));
                kept
            }
            WhooshQuery::Not(inner, boost) => {
                let excluded = self.eval(inner)?;
                let rest = self
                    .postings
                    .all_docs()?
                    .into_iter()
                    .filter(|id| !excluded.contains_key(id))
                    .collect();
                self.constant(rest, *boost)
            }
        })
    }

    fn term(&self, text: &str) -> Result<Scores> {
        Ok(self.postings.scored(text)?.into_iter().collect())
    }

    fn constant(&self, ids: Vec<RecordId>, boost: f32) -> Scores {
        ids.into_iter().map(|id| (id, boost)).collect()
    }

    /// A multi-term query over the indexed terms `matches` accepts among those of the sorted
    /// dictionary from `lower` on while `within` holds (see the module comment).
    fn expansion(
        &self,
        field: &str,
        lower: Bound<&str>,
        within: &dyn Fn(&str) -> bool,
        matches: impl Fn(&str) -> bool,
        boost: f32,
    ) -> Result<Scores> {
        if field != self.field {
            return Ok(Scores::new());
        }
        // In order already: the dictionary is walked sorted.
        let terms: Vec<String> = self
            .postings
            .terms_from(lower, within)
            .into_iter()
            .filter(|t| matches(t))
            .collect();
        let scored_terms = terms.len() == 1
            || (terms.len() < TOO_MANY_CLAUSES
                && (terms.len() == 2 || self.postings.num_docs() > SCORED_EXPANSION_ABOVE_DOCS));
        let mut sum = Scores::new();
        for term in &terms {
            for (id, score) in self.postings.scored(term)? {
                let entry = sum.entry(id).or_default();
                if scored_terms {
                    *entry += score;
                } else {
                    *entry = 1.0;
                }
            }
        }
        Ok(if scored_terms {
            boosted(sum, boost)
        } else {
            sum
        })
    }

    /// Documents holding `words` in order, each 1..=`slop` positions after the previous one,
    /// scored as the sum of the words' own BM25 scores (Whoosh's `SpanNear2` wraps the
    /// intersection of the term matchers).
    fn phrase(&self, words: &[String], slop: u32) -> Result<Scores> {
        let Some((first, rest)) = words.split_first() else {
            return Ok(Scores::new());
        };
        let mut sum = self.term(first)?;
        for word in rest {
            let next = self.term(word)?;
            sum.retain(|id, _| next.contains_key(id));
            for (id, score) in sum.iter_mut() {
                *score += next.get(id).copied().unwrap_or_default();
            }
        }
        let mut kept = Scores::new();
        for (id, score) in sum {
            if has_chain(&self.postings.positions(id)?, words, slop.max(1) as usize) {
                kept.insert(id, score);
            }
        }
        Ok(kept)
    }
}

fn boosted(mut scores: Scores, boost: f32) -> Scores {
    if boost != 1.0 {
        for score in scores.values_mut() {
            *score *= boost;
        }
    }
    scores
}

/// Whether `terms` holds `words` in order, each 1..=`slop` positions after the previous.
fn has_chain(terms: &[String], words: &[String], slop: usize) -> bool {
    // Positions where the phrase so far can end, updated word by word.
    let mut ends: Vec<usize> = terms
        .iter()
        .enumerate()
        .filter(|(_, t)| Some(*t) == words.first())
        .map(|(i, _)| i)
        .collect();
    for word in words.iter().skip(1) {
        ends = terms
            .iter()
            .enumerate()
            .filter(|(i, t)| *t == word && ends.iter().any(|e| *i > *e && *i - *e <= slop))
            .map(|(i, _)| i)
            .collect();
        if ends.is_empty() {
            return false;
        }
    }
    !ends.is_empty()
}

/// The literal text a glob pattern's matches all start with: everything before its first `*`,
/// `?` or `[` (an unclosed `[` is literal in `fnmatch`, so stopping there only widens the walk).
pub(crate) fn literal_prefix(pattern: &str) -> &str {
    pattern
        .find(['*', '?', '['])
        .map_or(pattern, |end| &pattern[..end])
}

/// Python's `fnmatch` glob semantics (what Whoosh's `Wildcard` compiles its text to): `*` any
/// run, `?` one character, `[abc]`/`[a-z]`/`[!abc]` one character of a set, everything else
/// literal; the whole term must match.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    // The last `*` seen and the text position it is currently stretched to.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        let step = match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
                continue;
            }
            Some('?') => Some(p + 1),
            Some('[') => match class(&pattern, p) {
                Some((members, end)) => members.matches(text[t]).then_some(end),
                None => (text[t] == '[').then_some(p + 1),
            },
            Some(&c) => (text[t] == c).then_some(p + 1),
            None => None,
        };
        match (step, star) {
            (Some(next), _) => {
                p = next;
                t += 1;
            }
            (None, Some((star_p, star_t))) => {
                p = star_p + 1;
                t = star_t + 1;
                star = Some((star_p, star_t + 1));
            }
            (None, None) => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// A `[...]` set of characters.
struct CharClass {
    negated: bool,
    items: Vec<(char, char)>,
}

impl CharClass {
    fn matches(&self, c: char) -> bool {
        self.items.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }
}

/// The set opening at `pattern[open]` and the index after its `]`, or `None` when it is not
/// closed (then `[` is a literal, as in `fnmatch`).
fn class(pattern: &[char], open: usize) -> Option<(CharClass, usize)> {
    let mut i = open + 1;
    let negated = pattern.get(i) == Some(&'!');
    if negated {
        i += 1;
    }
    // A `]` right after the opening is a member, not the end.
    let start = i;
    let mut end = i;
    loop {
        match pattern.get(end) {
            None => return None,
            Some(']') if end > start => break,
            Some(_) => end += 1,
        }
    }
    let members = &pattern[start..end];
    let mut items = Vec::new();
    let mut j = 0;
    while j < members.len() {
        if j + 2 < members.len() && members[j + 1] == '-' {
            items.push((members[j], members[j + 2]));
            j += 3;
        } else {
            items.push((members[j], members[j]));
            j += 1;
        }
    }
    Some((CharClass { negated, items }, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_follow_fnmatch() {
        assert!(glob_match("drive?", "drives"));
        assert!(glob_match("drive?", "driver"));
        assert!(!glob_match("drive?", "drive"));
        assert!(!glob_match("drive?", "drivers"));
        assert!(glob_match("dri*", "dri"));
        assert!(glob_match("*ing", "running"));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b*c", "axxbyy"));
        assert!(glob_match("dri[vr]e", "drive"));
        assert!(glob_match("dri[!v]e", "drire"));
        assert!(!glob_match("dri[!v]e", "drive"));
        assert!(glob_match("[a-c]at", "bat"));
        assert!(glob_match("x[y", "x[y"));
        assert!(glob_match("[]]", "]"));
        assert!(glob_match("café?", "cafés"));
    }

    #[test]
    fn glob_matches_start_with_the_literal_prefix() {
        assert_eq!(literal_prefix("drive?"), "drive");
        assert_eq!(literal_prefix("dri*ng"), "dri");
        assert_eq!(literal_prefix("*ing"), "");
        assert_eq!(literal_prefix("x[y"), "x");
        assert_eq!(literal_prefix("café?"), "café");
        assert_eq!(literal_prefix("plain"), "plain");
        for (pattern, text) in [
            ("drive?", "drives"),
            ("dri*", "dri"),
            ("x[y", "x[y"),
            ("[]]", "]"),
        ] {
            assert!(glob_match(pattern, text));
            assert!(text.starts_with(literal_prefix(pattern)));
        }
    }

    #[test]
    fn phrases_need_order_and_distance() {
        let terms: Vec<String> = ["charlotte", "web", "book"].map(String::from).to_vec();
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(has_chain(&terms, &words(&["charlotte", "web"]), 1));
        assert!(!has_chain(&terms, &words(&["web", "charlotte"]), 1));
        assert!(!has_chain(&terms, &words(&["charlotte", "book"]), 1));
        assert!(has_chain(&terms, &words(&["charlotte", "book"]), 2));
    }
}
