//! A query for the documents holding any of a set of exact terms, cheap to hand to a writer.
//!
//! tantivy turns every delete query into a weight on the writing thread, at once. Its own
//! [`TermSetQuery`](tantivy::query::TermSetQuery) compiles the terms into an FST there, whose
//! builder allocates and clears a registry of about a megabyte each time: 1.1 of the 4.9 ms
//! commit of a filtered delete of 1 170 records (0.2–0.3 ms with this query). [`IdSetQuery`]'s
//! weight only shares the sorted terms; each segment looks them up in its term dictionary when
//! the writer applies the delete, off the writing thread.

use std::sync::Arc;

use tantivy::query::{
    BitSetDocSet, ConstScorer, EnableScoring, Explanation, Query, Scorer, Weight,
};
use tantivy::schema::IndexRecordOption;
use tantivy::{BitSet, DocId, DocSet, Score, SegmentReader, TantivyError, Term, TERMINATED};

/// The documents holding any of some terms (the engine's record keys).
#[derive(Clone, Debug)]
pub(super) struct IdSetQuery {
    /// Sorted, so those of one field are together.
    terms: Arc<[Term]>,
}

impl IdSetQuery {
    /// The documents holding any of `terms`.
    pub(super) fn new(mut terms: Vec<Term>) -> IdSetQuery {
        terms.sort_unstable();
        terms.dedup();
        IdSetQuery {
            terms: terms.into(),
        }
    }
}

impl Query for IdSetQuery {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        self.terms.iter().for_each(|term| visitor(term, false));
    }
}

impl Weight for IdSetQuery {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let mut docs = BitSet::with_max_value(reader.max_doc());
        for terms in self.terms.chunk_by(|a, b| a.field() == b.field()) {
            let index = reader.inverted_index(terms[0].field())?;
            for term in terms {
                let Some(mut postings) = index.read_postings(term, IndexRecordOption::Basic)?
                else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    docs.insert(doc);
                    doc = postings.advance();
                }
            }
        }
        Ok(Box::new(ConstScorer::new(BitSetDocSet::from(docs), boost)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut scorer = self.scorer(reader, 1.0)?;
        if scorer.seek(doc) == doc {
            Ok(Explanation::new("IdSetQuery", 1.0))
        } else {
            Err(TantivyError::InvalidArgument(format!(
                "document {doc} holds none of the terms"
            )))
        }
    }
}
