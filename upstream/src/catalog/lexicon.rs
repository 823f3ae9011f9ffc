//! Where upstream's lexicons stand in its sources, and the hash of each at the known commit:
//! the word lists JuDGE's rule-based metrics match judgments against. Like the prompt rows,
//! these only point at upstream's text; the project holds none of it.

/// The file of JuDGE's charge extraction.
pub(crate) const JUDGE_LEXICON_FILE: &str = "src/dataset/judge/crime_extraction.py";

/// One lexicon: a module-level name of [`JUDGE_LEXICON_FILE`] and its hash.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LexiconRow {
    /// The module-level name the lexicon is assigned to.
    pub name: &'static str,
    /// The first 16 hex digits of the SHA-256 of its literals' source text at
    /// [`super::KNOWN_COMMIT`]: for a string, the literals joined; for a dictionary of lists,
    /// each entry in Python's key order as `key:item,item,…` followed by a newline.
    pub sha256: &'static str,
}

/// JuDGE's lexicons: the charge names (one per line of a string), the keyword-to-charges table
/// and the table of rarer charges, in the order `process_special_case` consults them.
pub(crate) const JUDGE_LEXICON: [LexiconRow; 3] = [
    LexiconRow {
        name: "crime_name",
        sha256: "ce3595dcc6a95a60",
    },
    LexiconRow {
        name: "replace_dict",
        sha256: "8aaed8e2842f30ba",
    },
    LexiconRow {
        name: "replace_dict_rare",
        sha256: "1e4dfcc0eadf6119",
    },
];
