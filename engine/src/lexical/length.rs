//! Document lengths as Whoosh stores them.
//!
//! BM25 divides a term's frequency by the document's length relative to the average. Whoosh
//! keeps each document's length in one byte: the smallest of 256 logarithmically spaced
//! values (`round((1.033^b − 1) · 27)`) that is at least the true length, so lengths are exact
//! up to 10 terms and then rounded up by about 3 %. MemoryBench's BM25 scores depend on it
//! (an 11-term document counts as 12), so the index gives every document Whoosh's length:
//! [`whoosh_length`] terms, the real ones followed by padding that no query can match.
//! tantivy stores lengths exactly up to 40 and in coarser steps above, where the two encodings
//! can still differ slightly. The average length stays the exact one, as in Whoosh.

use std::sync::OnceLock;

/// The lengths Whoosh's one-byte encoding can represent, ascending.
fn table() -> &'static [u32; 256] {
    static TABLE: OnceLock<[u32; 256]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = [0u32; 256];
        for (b, slot) in table.iter_mut().enumerate() {
            *slot = ((1.033f64.powi(b as i32) - 1.0) * 27.0).round_ties_even() as u32;
        }
        table
    })
}

/// The length Whoosh records for a document of `terms` terms.
pub(crate) fn whoosh_length(terms: usize) -> u32 {
    let table = table();
    let terms = u32::try_from(terms).unwrap_or(u32::MAX);
    match table.iter().find(|&&length| length >= terms) {
        Some(&length) => length,
        None => table[255],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_match_whooshs_byte_encoding() {
        // Values printed by Whoosh 2.7.4's byte_to_length(length_to_byte(n)).
        let whoosh = [
            (0, 0),
            (1, 1),
            (10, 10),
            (11, 12),
            (12, 12),
            (15, 16),
            (19, 20),
            (22, 23),
            (41, 42),
            (43, 45),
            (79, 79),
            (80, 82),
            (106_374, 106_374),
            (1_000_000, 106_374),
        ];
        for (n, expected) in whoosh {
            assert_eq!(whoosh_length(n), expected, "{n}");
        }
    }
}
