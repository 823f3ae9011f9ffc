//! The word lists of JuDGE's charge extraction, as data: what the legal metrics are computed
//! with, and what an opened checkout keeps once read (`crate::legal` reads them).

/// A keyword and the charges it points at, in upstream's order.
pub type KeywordCharges = (String, Vec<String>);

/// The word lists of JuDGE's charge extraction, as upstream's module builds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeLexicon {
    /// The charge names (`CAUSE_NAMES`), one per line of `crime_name`, each stripped as
    /// Python's `str.strip` does, in file order (a repeated name kept once, where it first
    /// stands).
    pub charges: Vec<String>,
    /// `replace_dict`: a keyword found in an extracted charge and the charges it may abbreviate,
    /// in Python's dict order.
    pub keywords: Vec<KeywordCharges>,
    /// `replace_dict_rare`: the same for rarer charges, consulted after `keywords`.
    pub rare_keywords: Vec<KeywordCharges>,
}
