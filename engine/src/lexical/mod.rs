//! Lexical (BM25) search: analyzers, per-namespace statistics and the tantivy index.

pub mod analyzer;
mod document;
mod generation;
mod id_set;
pub(crate) mod index;
mod length;
pub mod scoring;
mod segments;
pub mod stats;
pub mod whoosh;
mod writer;

pub use analyzer::{AnalyzerTokenizer, Term};
pub use scoring::Idf;
pub use stats::LexicalStats;
