//! Query syntaxes for lexical search: plain text, or Whoosh's query language.
//!
//! [`QuerySyntax::Plain`] analyzes the query into terms and ORs them, whatever they are.
//! [`QuerySyntax::Whoosh`] reads it as Whoosh's default query parser with an OR group does
//! (what MemoryBench's BM25 baselines do to every question) and scores it with Whoosh's rules
//! (see [`crate::lexical::whoosh`]).

use std::ops::Bound;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::lexical::whoosh::{self, eval::Postings};
use crate::lexical::LexicalStats;
use crate::record::RecordId;
use crate::state::{Inner, NamespaceState};

/// How [`Engine::search_query`](crate::Engine::search_query) reads its query text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuerySyntax {
    /// Every word is an OR-ed term: no operators, quotes, fields or wildcards.
    #[default]
    Plain,
    /// Whoosh's default query syntax with OR between clauses: a word ending in `?` or holding
    /// `*` is a wildcard, quotes make phrases, `AND`/`OR`/`NOT` are operators, `field:` and
    /// `^boost` apply. The indexed text is the field `content`.
    Whoosh,
}

/// The field name Whoosh queries address the indexed text by (upstream's schema names it
/// `content`; its other field, `doc_id`, matches nothing here).
pub const WHOOSH_TEXT_FIELD: &str = "content";
/// The fields of upstream's BM25 schema, which the parser recognizes in `field:` prefixes.
const WHOOSH_FIELDS: [&str; 2] = ["doc_id", WHOOSH_TEXT_FIELD];

impl Inner {
    /// The top `k` records of `ns` for `query` read as Whoosh query syntax.
    pub(crate) fn whoosh_ranking(
        &self,
        ns: &Arc<NamespaceState>,
        query: &str,
        k: usize,
    ) -> Result<Vec<(RecordId, f32)>> {
        let parsed = whoosh::parse(query, WHOOSH_TEXT_FIELD, &WHOOSH_FIELDS, &ns.info.analyzer);
        let derived = self.derived(ns)?;
        let stats = self.stats(ns, &derived)?.read();
        let postings = NamespacePostings {
            inner: self,
            ns,
            stats: &stats,
        };
        whoosh::eval::top_k(&postings, WHOOSH_TEXT_FIELD, &parsed, k)
    }
}

/// One namespace's lexical field as Whoosh scoring reads it.
struct NamespacePostings<'a> {
    inner: &'a Inner,
    ns: &'a NamespaceState,
    stats: &'a LexicalStats,
}

impl Postings for NamespacePostings<'_> {
    fn num_docs(&self) -> u64 {
        self.stats.num_docs()
    }

    fn terms_from(&self, lower: Bound<&str>, keep: &dyn Fn(&str) -> bool) -> Vec<String> {
        self.stats
            .terms_from(lower, keep)
            .map(str::to_string)
            .collect()
    }

    fn scored(&self, term: &str) -> Result<Vec<(RecordId, f32)>> {
        let doc_freq = self.stats.doc_freq(term);
        if doc_freq == 0 {
            return Ok(Vec::new());
        }
        self.inner.lexical.matches(
            self.ns.info.id,
            self.ns.info.analyzer,
            &[term.to_string()],
            self.stats,
            self.inner.options.bm25_idf,
            usize::try_from(doc_freq).unwrap_or(usize::MAX),
        )
    }

    fn all_docs(&self) -> Result<Vec<RecordId>> {
        self.inner
            .store
            .iter_records(self.ns.info.id)?
            .map(|r| r.map(|r| r.id))
            .collect()
    }

    fn positions(&self, id: RecordId) -> Result<Vec<String>> {
        let record = self.inner.store.record(self.ns.info.id, id)?;
        Ok(record
            .map(|r| {
                self.ns
                    .info
                    .analyzer
                    .analyze(&r.text)
                    .into_iter()
                    .map(|t| t.text)
                    .collect()
            })
            .unwrap_or_default())
    }
}
