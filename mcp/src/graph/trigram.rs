//! A trigram index over the entities' prepared search text, so that `search_nodes` looks only
//! at entities that can match instead of scanning the whole graph (a load profile showed the
//! scan taking 39% of the server's time once the graph held tens of thousands of entities).
//!
//! Every 3-byte window of an entity's folded text (see [`crate::graph::node::Searchable`]) is a
//! trigram; each trigram lists the serials of the entities holding it, sorted. A query of 3
//! bytes or more can only occur in a text holding every trigram of the query, so intersecting
//! the query's lists gives a superset of the matches, which the caller then verifies with the
//! same substring test as the scan: results are the scan's, exactly.
//!
//! Windows containing NUL are not indexed: NUL joins the fields of the folded text, and a
//! query holding a NUL is never answered from the index (it is matched field by field), so
//! such a window could only produce candidates that fail verification.
//!
//! The index is kept exact on every change (old trigrams out, new ones in), never marked stale,
//! so its size follows the graph's and two graphs with the same content have equal indexes.

use std::collections::HashMap;

/// A candidate set this small is left to the caller's verification rather than intersected
/// further: checking a few texts costs less than walking another posting list.
const FEW_CANDIDATES: usize = 8;

/// Serials of entities, sorted ascending, for each trigram of their folded text.
///
/// Memory: 4 bytes per distinct NUL-free trigram of each entity's folded text (at most one
/// per byte of that text, so at most about 4x the text itself, plus `Vec` growth slack), and
/// one map entry (key, list header) per distinct trigram in the whole graph, which is bounded
/// by the number of indexed bytes. Each entity node also carries its 4-byte serial.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrigramIndex {
    postings: HashMap<u32, Vec<u32>>,
}

/// The distinct NUL-free trigrams of `text`, sorted: what is indexed for a text, and what a
/// query is looked up by.
pub fn trigrams(text: &[u8]) -> Vec<u32> {
    let mut grams: Vec<u32> = text
        .windows(3)
        .filter(|w| !w.contains(&0))
        .map(|w| u32::from(w[0]) << 16 | u32::from(w[1]) << 8 | u32::from(w[2]))
        .collect();
    grams.sort_unstable();
    grams.dedup();
    grams
}

impl TrigramIndex {
    /// Indexes the text of entity `serial`. Appending serials in increasing order (the usual
    /// case: new entities get the next serial) costs one push per trigram.
    pub fn insert(&mut self, serial: u32, text: &str) {
        for gram in trigrams(text.as_bytes()) {
            self.add(gram, serial);
        }
    }

    /// Forgets the text of entity `serial` (an entity leaving the graph).
    pub fn remove(&mut self, serial: u32, text: &str) {
        for gram in trigrams(text.as_bytes()) {
            self.take(gram, serial);
        }
    }

    /// Moves entity `serial` from its `old` text to its `new` one, touching only the trigrams
    /// that differ (adding an observation leaves the others alone).
    pub fn update(&mut self, serial: u32, old: &str, new: &str) {
        let old = trigrams(old.as_bytes());
        let new = trigrams(new.as_bytes());
        let (mut i, mut j) = (0, 0);
        while i < old.len() || j < new.len() {
            match (old.get(i), new.get(j)) {
                (Some(&o), Some(&n)) if o == n => {
                    i += 1;
                    j += 1;
                }
                (Some(&o), Some(&n)) if o < n => {
                    self.take(o, serial);
                    i += 1;
                }
                (Some(&o), None) => {
                    self.take(o, serial);
                    i += 1;
                }
                (_, Some(&n)) => {
                    self.add(n, serial);
                    j += 1;
                }
                (None, None) => break,
            }
        }
    }

    /// Drops everything (before indexing the graph again, e.g. after renumbering serials).
    pub fn clear(&mut self) {
        self.postings.clear();
    }

    /// The serials, sorted, of the entities whose text may hold `query` (already folded): those
    /// holding its trigrams, rarest first, intersected until at most 8 remain;
    /// a superset of the texts containing `query`. `None` when the index cannot
    /// answer: a query shorter than 3 bytes, or one holding a NUL (matched field by field).
    pub fn candidates(&self, query: &str) -> Option<Vec<u32>> {
        let query = query.as_bytes();
        if query.len() < 3 || query.contains(&0) {
            return None;
        }
        let mut lists = Vec::new();
        for gram in trigrams(query) {
            match self.postings.get(&gram) {
                Some(list) => lists.push(list.as_slice()),
                None => return Some(Vec::new()),
            }
        }
        lists.sort_unstable_by_key(|l| l.len());
        let mut lists = lists.into_iter();
        let mut candidates = lists.next().map(<[u32]>::to_vec).unwrap_or_default();
        for list in lists {
            if candidates.len() <= FEW_CANDIDATES {
                break;
            }
            retain_in(&mut candidates, list);
        }
        Some(candidates)
    }

    /// How many postings the index holds (one per entity per distinct trigram).
    #[cfg(test)]
    pub fn postings(&self) -> usize {
        self.postings.values().map(Vec::len).sum()
    }

    fn add(&mut self, gram: u32, serial: u32) {
        let list = self.postings.entry(gram).or_default();
        match list.last() {
            None => list.push(serial),
            Some(&last) if last < serial => list.push(serial),
            Some(_) => {
                if let Err(at) = list.binary_search(&serial) {
                    list.insert(at, serial);
                }
            }
        }
    }

    fn take(&mut self, gram: u32, serial: u32) {
        if let Some(list) = self.postings.get_mut(&gram) {
            if let Ok(at) = list.binary_search(&serial) {
                list.remove(at);
            }
            if list.is_empty() {
                self.postings.remove(&gram);
            }
        }
    }
}

/// Keeps the candidates found in `list` (both sorted). Each is looked for only after the
/// previous one, galloping (steps 1, 2, 4, ...) before a binary search of the last step, so the
/// cost follows the gaps between them: a few candidates against a long list cost a few short
/// searches, and two lists of similar length are merged in about their length.
fn retain_in(candidates: &mut Vec<u32>, list: &[u32]) {
    let mut rest = list;
    candidates.retain(|&serial| {
        let mut step = 1;
        while rest.get(step).is_some_and(|&s| s < serial) {
            step *= 2;
        }
        let window = rest.get(..step + 1).unwrap_or(rest);
        rest = &rest[window.partition_point(|&s| s < serial)..];
        rest.first() == Some(&serial)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigrams_skip_nul_windows_and_repeat_once() {
        assert_eq!(trigrams(b"ab"), Vec::<u32>::new());
        assert_eq!(trigrams(b"aaaa"), vec![0x61_6161]);
        assert_eq!(trigrams(b"ab\0cd"), Vec::<u32>::new());
        assert_eq!(trigrams(b"abc\0d").len(), 1);
    }

    #[test]
    fn updates_keep_lists_exact_and_sorted() {
        let mut index = TrigramIndex::default();
        index.insert(1, "hello world");
        index.insert(5, "yellow");
        index.insert(3, "help");
        assert_eq!(index.candidates("ell"), Some(vec![1, 5]));
        assert_eq!(index.candidates("hel"), Some(vec![1, 3]));
        assert_eq!(index.candidates("ello"), Some(vec![1, 5]));
        assert_eq!(index.candidates("xyz"), Some(vec![]));
        assert_eq!(index.candidates("he"), None);
        assert_eq!(index.candidates("he\0l"), None);
        index.update(1, "hello world", "hello\0word");
        assert_eq!(index.candidates("wor"), Some(vec![1]));
        assert_eq!(index.candidates("rld"), Some(vec![]));
        index.update(3, "help", "yelp");
        assert_eq!(index.candidates("yel"), Some(vec![3, 5]));
        let mut fresh = TrigramIndex::default();
        fresh.insert(1, "hello\0word");
        fresh.insert(3, "yelp");
        fresh.insert(5, "yellow");
        assert_eq!(index, fresh, "the index depends only on the texts");
        index.remove(1, "hello\0word");
        index.remove(3, "yelp");
        index.remove(5, "yellow");
        assert_eq!(index.postings(), 0);
        assert_eq!(index, TrigramIndex::default());
    }

    #[test]
    fn intersection_starts_anywhere_in_long_lists() {
        let mut candidates = vec![2, 7, 9, 40];
        retain_in(&mut candidates, &[1, 2, 3, 9, 10, 40]);
        assert_eq!(candidates, vec![2, 9, 40]);
        let long: Vec<u32> = (0..1000).map(|i| i * 3).collect();
        let mut candidates: Vec<u32> = (0..3000).collect();
        retain_in(&mut candidates, &long);
        assert_eq!(candidates, long, "a merge of similar lists");
        let mut candidates = vec![0, 1, 2997, 2999, 5000];
        retain_in(&mut candidates, &long);
        assert_eq!(candidates, vec![0, 2997], "far jumps");
        retain_in(&mut candidates, &[]);
        assert!(candidates.is_empty());
    }
}
