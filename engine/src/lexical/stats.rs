//! Per-namespace BM25 statistics.
//!
//! One tantivy index holds every namespace, but BM25 must score a namespace's documents as if
//! the index held nothing else. These statistics (document count, token count, document
//! frequency per term, all over live documents of one namespace) replace tantivy's index-wide
//! ones through [`Bm25StatisticsProvider`]. The live terms are also kept sorted, so a wildcard,
//! prefix or range query visits only the terms in its range instead of the whole vocabulary.

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::Field;
use tantivy::Term as IndexTerm;

use super::analyzer::Term;
use crate::namespace::Analyzer;

/// Live-document statistics of one namespace's lexical field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexicalStats {
    num_docs: u64,
    total_tokens: u64,
    /// Hashed with foldhash: keyed per map like the standard library's SipHash (the terms are
    /// the users' words), at a fraction of its cost (a snapshot's decode inserts every term).
    doc_freq: HashMap<Arc<str>, u64, foldhash::fast::RandomState>,
    /// The keys of `doc_freq` in order (the namespace's sorted term dictionary), sharing their
    /// text with it. Only a new or vanished term touches it, so most writes never do.
    sorted: BTreeSet<Arc<str>>,
    /// Estimated heap bytes of `doc_freq` and `sorted`, kept up to date by `add` and `remove`.
    heap_bytes: usize,
}

/// Estimated heap cost of one term beyond its bytes: the shared text's reference counts, the
/// hash table's slot (pointer, length, count) and control byte at its usual load, and the
/// sorted set's slot with its share of the tree's nodes.
const ENTRY_BYTES: usize = 72;

impl LexicalStats {
    /// Accounts for a document with these terms.
    pub(crate) fn add(&mut self, terms: &[Term]) {
        self.num_docs += 1;
        self.total_tokens += terms.len() as u64;
        for term in distinct(terms) {
            // Most terms are already known: look up before allocating the key.
            match self.doc_freq.get_mut(term) {
                Some(count) => *count += 1,
                None => {
                    let key: Arc<str> = Arc::from(term);
                    self.sorted.insert(Arc::clone(&key));
                    self.doc_freq.insert(key, 1);
                    self.heap_bytes += term.len() + ENTRY_BYTES;
                }
            }
        }
    }

    /// Takes out documents previously added (each with the terms it was added with).
    pub(crate) fn remove(&mut self, removed: &Removed) {
        self.num_docs = self.num_docs.saturating_sub(removed.docs);
        self.total_tokens = self.total_tokens.saturating_sub(removed.tokens);
        for (term, count) in &removed.doc_freq {
            if let Some(df) = self.doc_freq.get_mut(&**term) {
                *df = df.saturating_sub(count.docs);
                if *df == 0 {
                    self.doc_freq.remove(&**term);
                    self.sorted.remove(&**term);
                    self.heap_bytes = self.heap_bytes.saturating_sub(term.len() + ENTRY_BYTES);
                }
            }
        }
    }

    /// Estimated heap bytes of the statistics.
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }

    /// Number of live documents.
    pub fn num_docs(&self) -> u64 {
        self.num_docs
    }

    /// Number of live documents containing `term`.
    pub fn doc_freq(&self, term: &str) -> u64 {
        self.doc_freq.get(term).copied().unwrap_or(0)
    }

    /// Every term of a live document (the namespace's term dictionary), in order.
    pub fn terms(&self) -> impl Iterator<Item = &str> {
        self.sorted.iter().map(|t| &**t)
    }

    /// The live terms from `lower` on, in order, for as long as `keep` accepts them: a walk of
    /// the sorted dictionary that touches only the terms of a range (`Included("dri")` while
    /// they start with `dri` is a prefix query's), not the whole vocabulary.
    pub fn terms_from<'a>(
        &'a self,
        lower: Bound<&'a str>,
        keep: impl Fn(&str) -> bool + 'a,
    ) -> impl Iterator<Item = &'a str> + 'a {
        self.sorted
            .range::<str, _>((lower, Bound::Unbounded))
            .map(|t| &**t)
            .take_while(move |t| keep(t))
    }

    /// The statistics as bytes (see [`LexicalStats::from_bytes`]): document and token counts,
    /// then each term in order with its document frequency.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.heap_bytes / 4);
        out.extend_from_slice(&self.num_docs.to_le_bytes());
        out.extend_from_slice(&self.total_tokens.to_le_bytes());
        out.extend_from_slice(&(self.sorted.len() as u64).to_le_bytes());
        for term in &self.sorted {
            out.extend_from_slice(&(term.len() as u32).to_le_bytes());
            out.extend_from_slice(term.as_bytes());
            out.extend_from_slice(&self.doc_freq(term).to_le_bytes());
        }
        out
    }

    /// Statistics from [`LexicalStats::to_bytes`]; `None` when the bytes are not such a
    /// thing (cut short, a term that is not UTF-8, out of order or without documents, a count
    /// larger than the bytes could hold).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<LexicalStats> {
        let mut reader = Reader(bytes);
        let num_docs = reader.u64()?;
        let total_tokens = reader.u64()?;
        let terms = usize::try_from(reader.u64()?).ok()?;
        // Each term takes at least 12 bytes: a longer claim is not these bytes' to make.
        if terms > bytes.len() / 12 {
            return None;
        }
        let mut stats = LexicalStats {
            num_docs,
            total_tokens,
            ..LexicalStats::default()
        };
        stats.doc_freq.reserve(terms);
        let mut sorted: Vec<Arc<str>> = Vec::with_capacity(terms);
        for _ in 0..terms {
            let len = usize::try_from(reader.u32()?).ok()?;
            let term = std::str::from_utf8(reader.take(len)?).ok()?;
            let df = reader.u64()?;
            if df == 0 || sorted.last().is_some_and(|p| &**p >= term) {
                return None;
            }
            let key: Arc<str> = Arc::from(term);
            stats.doc_freq.insert(Arc::clone(&key), df);
            stats.heap_bytes += term.len() + ENTRY_BYTES;
            sorted.push(key);
        }
        // Built from terms in order, the set is filled leaf by leaf (no search per term: a
        // term at a time had been half of a reopened 100k namespace's first answer).
        stats.sorted = sorted.into_iter().collect();
        reader.0.is_empty().then_some(stats)
    }

    /// Average number of terms per document (BM25's average field length).
    pub fn average_length(&self) -> f32 {
        if self.num_docs == 0 {
            0.0
        } else {
            self.total_tokens as f32 / self.num_docs as f32
        }
    }
}

/// Documents leaving a namespace in one write, summed: their number, their tokens, and per
/// term the number of them that contain it. A delete of a thousand records then touches the
/// statistics once per distinct term of the write, and counts each record's distinct terms
/// with one lookup per token instead of sorting its terms (the analysis and the sort had been
/// two thirds of a filtered delete's time: docs/history.md).
#[derive(Debug, Default)]
pub(crate) struct Removed {
    docs: u64,
    tokens: u64,
    /// Hashed with Fx: these keys are one write's terms, hashed once per token.
    doc_freq: FxHashMap<Box<str>, TermCount>,
}

/// How many removed documents contain a term, and the last one counted.
#[derive(Debug)]
struct TermCount {
    docs: u64,
    last: u64,
}

impl Removed {
    /// Adds a document with `text`, analyzed as it was indexed.
    pub(crate) fn document(&mut self, analyzer: Analyzer, text: &str) {
        self.docs += 1;
        let doc = self.docs;
        analyzer.for_each_term(text, |term| {
            self.tokens += 1;
            match self.doc_freq.get_mut(term) {
                Some(count) if count.last == doc => {}
                Some(count) => {
                    count.docs += 1;
                    count.last = doc;
                }
                None => {
                    self.doc_freq
                        .insert(term.into(), TermCount { docs: 1, last: doc });
                }
            }
        });
    }
}

/// Bytes read from the front, each read failing when too few remain.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = self.0.split_at_checked(n)?;
        self.0 = tail;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

fn distinct(terms: &[Term]) -> impl Iterator<Item = &str> {
    let mut seen: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.into_iter()
}

impl Bm25StatisticsProvider for LexicalStats {
    fn total_num_tokens(&self, _field: Field) -> tantivy::Result<u64> {
        Ok(self.total_tokens)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.num_docs)
    }

    fn doc_freq(&self, term: &IndexTerm) -> tantivy::Result<u64> {
        let value = term.value();
        let indexed = value.as_str().unwrap_or_default();
        Ok(LexicalStats::doc_freq(self, strip_namespace(indexed)))
    }
}

/// The term of an indexed, namespaced term text.
pub(crate) fn strip_namespace(indexed: &str) -> &str {
    indexed.split_once(':').map_or(indexed, |(_, term)| term)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_remove_is_exact() {
        let mut s = LexicalStats::default();
        let a = Analyzer::Standard.analyze("apple banana apple");
        let b = Analyzer::Standard.analyze("banana cherry");
        s.add(&a);
        s.add(&b);
        assert_eq!(s.num_docs(), 2);
        assert_eq!(s.doc_freq("apple"), 1);
        assert_eq!(s.doc_freq("banana"), 2);
        assert!((s.average_length() - 2.5).abs() < 1e-6);
        s.remove(&removed(&["apple banana apple"]));
        let mut only_b = LexicalStats::default();
        only_b.add(&b);
        assert_eq!(s, only_b);
    }

    fn removed(texts: &[&str]) -> Removed {
        let mut removed = Removed::default();
        for text in texts {
            removed.document(Analyzer::Standard, text);
        }
        removed
    }

    #[test]
    fn removing_documents_together_is_removing_them_one_by_one() {
        let texts = [
            "apple banana apple",
            "banana cherry banana banana",
            "cherry date",
            "apple",
            "elder fig fig",
        ];
        let mut all = LexicalStats::default();
        for text in texts {
            all.add(&Analyzer::Standard.analyze(text));
        }
        let mut together = all.clone();
        together.remove(&removed(&texts[..3]));
        let mut one_by_one = all.clone();
        for text in &texts[..3] {
            one_by_one.remove(&removed(&[text]));
        }
        let mut rest = LexicalStats::default();
        for text in &texts[3..] {
            rest.add(&Analyzer::Standard.analyze(text));
        }
        assert_eq!(together, rest);
        assert_eq!(one_by_one, rest);
        assert_eq!(together.doc_freq("banana"), 0);
        assert_eq!(together.doc_freq("apple"), 1);
        assert_eq!(
            together.terms().collect::<Vec<_>>(),
            ["apple", "elder", "fig"]
        );
    }

    #[test]
    fn bytes_round_trip_and_bad_bytes_are_refused() {
        let mut s = LexicalStats::default();
        s.add(&Analyzer::Standard.analyze("apple banana apple, été"));
        s.add(&Analyzer::Standard.analyze("banana cherry"));
        let bytes = s.to_bytes();
        assert_eq!(LexicalStats::from_bytes(&bytes), Some(s.clone()));
        assert_eq!(
            LexicalStats::from_bytes(&LexicalStats::default().to_bytes()),
            Some(LexicalStats::default())
        );
        for cut in 0..bytes.len() {
            assert_eq!(
                LexicalStats::from_bytes(&bytes[..cut]),
                None,
                "cut at {cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(LexicalStats::from_bytes(&longer), None);
        let mut huge = bytes.clone();
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(LexicalStats::from_bytes(&huge), None);
        // Terms out of order, or without a document, are not a dictionary.
        let dictionary = |terms: &[(&str, u64)]| {
            let mut out = [1u64, 2, terms.len() as u64].map(u64::to_le_bytes).concat();
            for (term, df) in terms {
                out.extend_from_slice(&(term.len() as u32).to_le_bytes());
                out.extend_from_slice(term.as_bytes());
                out.extend_from_slice(&df.to_le_bytes());
            }
            out
        };
        assert!(LexicalStats::from_bytes(&dictionary(&[("a", 1), ("b", 1)])).is_some());
        assert_eq!(
            LexicalStats::from_bytes(&dictionary(&[("b", 1), ("a", 1)])),
            None
        );
        assert_eq!(
            LexicalStats::from_bytes(&dictionary(&[("a", 1), ("a", 1)])),
            None
        );
        assert_eq!(LexicalStats::from_bytes(&dictionary(&[("a", 0)])), None);
    }

    #[test]
    fn sorted_dictionary_walks_a_range() {
        let mut s = LexicalStats::default();
        let a = Analyzer::Standard.analyze("drive driver drives drove dr zebra");
        let b = Analyzer::Standard.analyze("driver cherry");
        s.add(&a);
        s.add(&b);
        let from = |lower, prefix: &'static str| -> Vec<&str> {
            s.terms_from(lower, move |t| t.starts_with(prefix))
                .collect()
        };
        assert_eq!(
            from(Bound::Included("dri"), "dri"),
            ["drive", "driver", "drives"]
        );
        assert_eq!(from(Bound::Excluded("drive"), "dri"), ["driver", "drives"]);
        assert_eq!(from(Bound::Included("x"), ""), ["zebra"]);
        let all: Vec<&str> = s.terms().collect();
        assert_eq!(
            all,
            ["cherry", "dr", "drive", "driver", "drives", "drove", "zebra"]
        );
        s.remove(&removed(&["drive driver drives drove dr zebra"]));
        assert_eq!(s.terms().collect::<Vec<_>>(), ["cherry", "driver"]);
    }
}
