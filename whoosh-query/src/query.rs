//! The query tree the parser yields and the analysis it needs: [`WhooshQuery`] (a query after
//! Whoosh's `normalize()`) and [`QueryAnalyzer`] (how query text becomes index terms).

/// A parsed Whoosh query, after Whoosh's `normalize()`. Texts are already analyzed (lowercased,
/// stop words removed where Whoosh removes them).
#[derive(Debug, Clone, PartialEq)]
pub enum WhooshQuery {
    /// Documents containing `text` in `field`, scored by BM25.
    Term {
        /// Field name (`content` unless the query named one).
        field: String,
        /// The analyzed term.
        text: String,
        /// Score multiplier (`word^2`).
        boost: f32,
    },
    /// Documents containing any indexed term matching a glob (`?` one character, `*` any run).
    Wildcard {
        /// Field name.
        field: String,
        /// The lowercased pattern, wildcards included.
        pattern: String,
        /// Score multiplier.
        boost: f32,
    },
    /// Documents containing any indexed term starting with `prefix` (`word*`).
    Prefix {
        /// Field name.
        field: String,
        /// The lowercased prefix.
        prefix: String,
        /// Score multiplier.
        boost: f32,
    },
    /// Documents containing `words` in order, each within `slop` positions of the previous.
    Phrase {
        /// Field name.
        field: String,
        /// The analyzed words.
        words: Vec<String>,
        /// Largest allowed distance between consecutive words (1: adjacent).
        slop: u32,
        /// Score multiplier.
        boost: f32,
    },
    /// Documents with a term between two bounds (`[a TO b]`, `{a TO b}`), constant score.
    Range {
        /// Field name.
        field: String,
        /// Lower bound, `None` when open.
        start: Option<String>,
        /// Upper bound, `None` when open.
        end: Option<String>,
        /// Whether the lower bound is excluded.
        start_excl: bool,
        /// Whether the upper bound is excluded.
        end_excl: bool,
        /// Score multiplier.
        boost: f32,
    },
    /// Every document, constant score (`*`, `*:*`).
    Every {
        /// Field name; empty for Whoosh's unfielded `Every()` (`*:*`), every document.
        field: String,
        /// Score multiplier.
        boost: f32,
    },
    /// Documents matching any subquery; scores add up.
    Or(Vec<WhooshQuery>, f32),
    /// Documents matching every subquery; scores add up.
    And(Vec<WhooshQuery>, f32),
    /// Documents matching the first query but not the second, scored by the first.
    AndNot(Box<WhooshQuery>, Box<WhooshQuery>),
    /// Documents matching the first query; the second adds its score where it matches.
    AndMaybe(Box<WhooshQuery>, Box<WhooshQuery>),
    /// Documents matching both, scored by the first only.
    Require(Box<WhooshQuery>, Box<WhooshQuery>),
    /// Documents not matching the query, constant score.
    Not(Box<WhooshQuery>, f32),
    /// Matches nothing (an empty query, or one of only stop words).
    Null,
}

/// How the parser turns query text into index terms: Whoosh's `field.process_text` in query
/// mode, backed by the namespace's analyzer.
pub trait QueryAnalyzer {
    /// The terms of `text`: split into words when `tokenize` (else the whole text is one
    /// term), lowercased, and with stop words and one-character terms dropped when
    /// `remove_stops` (else kept).
    fn terms(&self, text: &str, tokenize: bool, remove_stops: bool) -> Vec<String>;
}
