//! How records become tantivy documents: the schema, the namespaced terms and the padding that
//! gives each document Whoosh's length.
//!
//! Every indexed term is prefixed with its namespace id (`"{ns:x}:{term}"`), so each namespace
//! has its own posting lists inside the one index: a query reads only its namespace's postings
//! and needs no filter. A document is identified by its namespace and record id together (a
//! namespace copy keeps its source's record ids).
//!
//! Records are analyzed before they reach tantivy. A document's text is its final terms joined
//! by [`SEPARATOR`], which [`PreparedTokenizer`] splits again: cheaper than tantivy's
//! pre-tokenized text, which serializes every token into the document and back.

use tantivy::schema::{
    BytesOptions, Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{TantivyDocument, Term};

use super::analyzer::Term as AnalyzedTerm;
use super::length::whoosh_length;
use crate::namespace::Analyzer;
use crate::record::RecordId;

/// The text of the tokens that pad a document to Whoosh's length: no analyzer produces it.
const PADDING: &str = "\u{0}";

/// Separates the terms of a document's text; no analyzer produces it inside a term.
const SEPARATOR: char = '\u{1}';

/// Name under which [`PreparedTokenizer`] is registered: every text field uses it.
pub(crate) const PREPARED_TOKENIZER: &str = "mb_prepared";

/// The fields of the index's schema.
#[derive(Clone, Copy)]
pub(crate) struct Fields {
    pub(crate) ns: Field,
    /// The document's identity: namespace id and record id (big-endian bytes).
    pub(crate) key: Field,
    pub(crate) rid: Field,
    standard: Field,
    cjk: Field,
    stemmed: Field,
}

impl Fields {
    /// The text field an analyzer's documents are indexed in.
    pub(crate) fn text(&self, analyzer: Analyzer) -> Field {
        match analyzer {
            Analyzer::Standard => self.standard,
            Analyzer::Cjk => self.cjk,
            Analyzer::Stemmed => self.stemmed,
        }
    }

    /// The term that identifies the document of record `id` in namespace `ns`.
    pub(crate) fn key_term(&self, ns: u32, id: RecordId) -> Term {
        Term::from_field_bytes(self.key, &document_key(ns, id))
    }

    /// The term every document of namespace `ns` carries.
    pub(crate) fn namespace_term(&self, ns: u32) -> Term {
        Term::from_field_u64(self.ns, u64::from(ns))
    }

    /// The tantivy document of a record with the analyzed `terms`.
    pub(crate) fn document(
        &self,
        ns: u32,
        id: RecordId,
        analyzer: Analyzer,
        terms: &[AnalyzedTerm],
    ) -> TantivyDocument {
        use std::fmt::Write;
        // Padding up to Whoosh's recorded length (see `length`): tantivy derives the length
        // norm from the number of tokens.
        let padded = whoosh_length(terms.len()) as usize;
        let padding = std::iter::repeat_n(PADDING, padded.saturating_sub(terms.len()));
        let mut text = String::with_capacity(padded * 12);
        for term in terms.iter().map(|t| t.text.as_str()).chain(padding) {
            // Writing to a String cannot fail.
            let _ = write!(text, "{ns:x}:{term}{SEPARATOR}");
        }
        let mut doc = TantivyDocument::new();
        doc.add_u64(self.ns, u64::from(ns));
        doc.add_bytes(self.key, &document_key(ns, id));
        doc.add_u64(self.rid, id.0);
        doc.add_text(self.text(analyzer), text);
        doc
    }
}

/// The index's schema and its fields.
pub(crate) fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let ns = builder.add_u64_field("ns", NumericOptions::default().set_indexed());
    let key = builder.add_bytes_field("key", BytesOptions::default().set_indexed());
    let rid = builder.add_u64_field("rid", NumericOptions::default().set_fast());
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(PREPARED_TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let standard = builder.add_text_field("text_standard", text.clone());
    let cjk = builder.add_text_field("text_cjk", text.clone());
    let stemmed = builder.add_text_field("text_stemmed", text);
    let fields = Fields {
        ns,
        key,
        rid,
        standard,
        cjk,
        stemmed,
    };
    (builder.build(), fields)
}

/// The indexed form of `term` in namespace `ns`.
pub(crate) fn namespaced(ns: u32, term: &str) -> String {
    format!("{ns:x}:{term}")
}

/// The identity of the document of record `id` in namespace `ns`.
fn document_key(ns: u32, id: RecordId) -> [u8; 12] {
    let mut key = [0u8; 12];
    key[..4].copy_from_slice(&ns.to_be_bytes());
    key[4..].copy_from_slice(&id.0.to_be_bytes());
    key
}

/// Splits a document's text back into its terms.
#[derive(Clone)]
pub(crate) struct PreparedTokenizer;

/// The terms of one document's text.
pub(crate) struct PreparedStream<'a> {
    terms: std::str::Split<'a, char>,
    token: Token,
}

impl Tokenizer for PreparedTokenizer {
    type TokenStream<'a> = PreparedStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> PreparedStream<'a> {
        PreparedStream {
            terms: text.split(SEPARATOR),
            token: Token {
                // The first `advance` moves to position 0.
                position: usize::MAX,
                ..Token::default()
            },
        }
    }
}

impl TokenStream for PreparedStream<'_> {
    fn advance(&mut self) -> bool {
        match self.terms.next() {
            Some(term) if !term.is_empty() => {
                self.token.text.clear();
                self.token.text.push_str(term);
                self.token.position = self.token.position.wrapping_add(1);
                true
            }
            _ => false,
        }
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}
