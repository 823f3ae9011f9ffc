//! Whoosh query syntax: what MemoryBench's BM25 baselines do to a question.
//!
//! The language itself (the parser and the query tree, [`parse`] and [`WhooshQuery`]) is the
//! `mb-whoosh-query` crate's, re-exported here; the engine evaluates the tree with Whoosh's
//! scoring rules (module `eval`) through `Engine::search_query` with `QuerySyntax::Whoosh`.

pub(crate) mod eval;

pub use mb_whoosh_query::{parse, QueryAnalyzer, WhooshQuery};
