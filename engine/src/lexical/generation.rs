//! A generation: the documents and deletions applied to the lexical index since a commit,
//! kept in memory and scored there with the same BM25 weights until the commit is visible, with
//! the tantivy operations not yet handed to the writer.

use std::collections::{HashMap, HashSet};

use tantivy::fieldnorm::FieldNormReader;
use tantivy::indexer::UserOperation;

use super::analyzer::Term as AnalyzedTerm;
use super::length::whoosh_length;
use crate::record::RecordId;

/// Documents and deletions applied since a commit.
#[derive(Default)]
pub(crate) struct Generation {
    pub(crate) docs: HashMap<u32, HashMap<RecordId, PendingDoc>>,
    /// Documents (namespace, record) whose older copies (committed or in older generations)
    /// are stale.
    pub(crate) masked: HashSet<(u32, RecordId)>,
    pub(crate) len: usize,
    /// tantivy operations of this generation's writes that the writer does not have yet.
    pub(crate) pending: Vec<UserOperation>,
    /// Some write was applied to this generation.
    pub(crate) applied: bool,
}

pub(crate) struct PendingDoc {
    pub(crate) fieldnorm_id: u8,
    /// Hashed with foldhash, keyed per map as SipHash is: every search of a term looks the
    /// term up in every uncommitted document, and SipHash was a seventh of a Whoosh-syntax
    /// query's time over uncommitted namespaces (`perf` of `whoosh_queries`).
    pub(crate) term_freqs: HashMap<String, u32, foldhash::fast::RandomState>,
}

impl Generation {
    pub(crate) fn insert(&mut self, ns: u32, id: RecordId, terms: &[AnalyzedTerm]) {
        let mut term_freqs = HashMap::default();
        for t in terms {
            *term_freqs.entry(t.text.clone()).or_insert(0u32) += 1;
        }
        let doc = PendingDoc {
            fieldnorm_id: FieldNormReader::fieldnorm_to_id(whoosh_length(terms.len())),
            term_freqs,
        };
        if self.docs.entry(ns).or_default().insert(id, doc).is_none() {
            self.len += 1;
        }
    }

    pub(crate) fn remove(&mut self, ns: u32, id: RecordId) {
        if let Some(docs) = self.docs.get_mut(&ns) {
            if docs.remove(&id).is_some() {
                self.len -= 1;
            }
        }
    }

    /// Forgets the documents of a dropped namespace.
    pub(crate) fn drop_namespace(&mut self, ns: u32) {
        if let Some(docs) = self.docs.remove(&ns) {
            self.len -= docs.len();
        }
    }

    /// Folds a newer generation into this one (used when a commit fails).
    pub(crate) fn absorb(&mut self, mut newer: Generation) {
        self.pending.append(&mut newer.pending);
        self.applied |= newer.applied;
        // What the newer generation deleted or replaced is stale here too.
        for &(ns, id) in &newer.masked {
            self.remove(ns, id);
        }
        for (ns, docs) in newer.docs {
            for (id, doc) in docs {
                if self.docs.entry(ns).or_default().insert(id, doc).is_none() {
                    self.len += 1;
                }
            }
        }
        self.masked.extend(newer.masked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(words: &[&str]) -> Vec<AnalyzedTerm> {
        words
            .iter()
            .map(|w| AnalyzedTerm {
                text: w.to_string(),
                start: 0,
                end: 0,
            })
            .collect()
    }

    #[test]
    fn absorbing_a_newer_generation_keeps_its_deletes_and_replacements() {
        // A failed commit puts the sealed generation back under the newer one.
        let mut sealed = Generation::default();
        sealed.insert(1, RecordId(5), &terms(&["cat"]));
        sealed.insert(1, RecordId(6), &terms(&["dog"]));
        sealed.applied = true;
        let mut newer = Generation::default();
        newer.remove(1, RecordId(5));
        newer.masked.insert((1, RecordId(5)));
        newer.masked.insert((1, RecordId(6)));
        newer.insert(1, RecordId(6), &terms(&["bird"]));
        sealed.absorb(newer);
        let docs = &sealed.docs[&1];
        assert!(
            !docs.contains_key(&RecordId(5)),
            "a deleted record came back"
        );
        assert!(docs[&RecordId(6)].term_freqs.contains_key("bird"));
        assert!(!docs[&RecordId(6)].term_freqs.contains_key("dog"));
        assert_eq!(sealed.len, 1);
        assert!(sealed.applied);
    }
}
