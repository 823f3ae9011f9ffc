//! Which inverse-document-frequency formula BM25 uses.
//!
//! tantivy scores with Lucene's BM25 idf, `ln(1 + (N - n + 0.5) / (n + 0.5))`. MemoryBench's
//! BM25 baselines run on Whoosh, whose BM25F uses `ln(N / (n + 1)) + 1` with the same term-
//! frequency part (`K1 = 1.2`, `B = 0.75`). The two weigh rare and common terms differently, so
//! multi-term rankings differ. Whoosh scoring is reproduced exactly by boosting each term's
//! tantivy score by the ratio of the two idfs.

/// The idf formula of lexical search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Idf {
    /// Whoosh's `ln(N / (n + 1)) + 1`: MemoryBench parity, the default.
    #[default]
    Whoosh,
    /// Lucene/tantivy's `ln(1 + (N - n + 0.5) / (n + 0.5))`.
    Lucene,
}

impl Idf {
    /// Value of the formula for a term in `doc_freq` of `num_docs` documents.
    pub fn value(self, doc_freq: u64, num_docs: u64) -> f32 {
        let (n, total) = (doc_freq as f64, num_docs as f64);
        let idf = match self {
            Idf::Whoosh => (total / (n + 1.0)).ln() + 1.0,
            Idf::Lucene => (1.0 + (total - n + 0.5) / (n + 0.5)).ln(),
        };
        idf as f32
    }

    /// Factor that turns tantivy's score of a term into this formula's score.
    pub(crate) fn boost(self, doc_freq: u64, num_docs: u64) -> f32 {
        match self {
            Idf::Lucene => 1.0,
            Idf::Whoosh => self.value(doc_freq, num_docs) / Idf::Lucene.value(doc_freq, num_docs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas() {
        assert!((Idf::Whoosh.value(1, 10) - (5f32.ln() + 1.0)).abs() < 1e-6);
        assert!((Idf::Lucene.value(1, 10) - (1.0f32 + 9.5 / 1.5).ln()).abs() < 1e-6);
        assert_eq!(Idf::Lucene.boost(3, 10), 1.0);
        let b = Idf::Whoosh.boost(3, 10);
        assert!((b * Idf::Lucene.value(3, 10) - Idf::Whoosh.value(3, 10)).abs() < 1e-5);
        // Whoosh's idf stays positive even for a term in every document.
        assert!(Idf::Whoosh.value(10, 10) > 0.0);
    }
}
