//! `mb-whoosh-query`: Whoosh's query language, parsed as MemoryBench's BM25 baselines parse a
//! question.
//!
//! Upstream passes every question through Whoosh's default `QueryParser` with an `OrGroup`
//! before searching, so the text is query syntax, not a bag of words: a word ending in `?`
//! becomes a wildcard (`drive?` matches `drives` and `driver`, not `drive`), quotes make
//! phrases, `AND`/`OR`/`NOT` are operators, `word:` names a field, `^2` boosts. [`parse()`]
//! reproduces that parser (checked against Whoosh 2.7.4 itself on random and real questions),
//! and [`WhooshQuery`] is the query it yields, printed the way Whoosh's `repr` prints it.
//!
//! The language is its own crate, like tantivy's `query-grammar`: turning text into a query tree
//! needs no storage, so the parser builds, and its parity with Whoosh is tested, without RocksDB
//! or tantivy. `mb-engine` evaluates the tree with Whoosh's scoring rules
//! (`Engine::search_query` with `QuerySyntax::Whoosh`).
//!
//! ```
//! use mb_text::Analyzer;
//! use mb_whoosh_query::parse;
//!
//! let query = parse("What car does he drive?", "content", &["content"], &Analyzer::Standard);
//! assert!(query.to_string().ends_with("Wildcard('content', 'drive?')])"));
//! ```

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod analyzer;
mod build;
mod normalize;
mod parse;
mod query;
mod repr;
mod syntax;
mod tag;

pub use parse::parse;
pub use query::{QueryAnalyzer, WhooshQuery};
