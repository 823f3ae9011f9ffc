//! Liang's hyphenation patterns, read from a hunspell `hyph_*.dic` file as pyphen (textstat's
//! syllable counter for words outside the pronouncing dictionary) reads them, and the places a
//! word may be hyphenated.
//!
//! A pattern such as `.a2ch4` holds letters with a digit between some of them; every pattern
//! found in `.word.` raises the value at its places to the pattern's digits, and an odd value is
//! a hyphenation point. Points closer than two characters to either end are dropped (pyphen's
//! defaults, which textstat keeps).

use std::collections::HashMap;

/// Points closer to the start or the end of a word than this are not counted (pyphen's
/// `left` and `right` defaults).
const EDGE: usize = 2;

/// A dictionary's patterns: the letters of each, with the offset of its first non-zero value
/// and its values from there.
#[derive(Debug, Default)]
pub(crate) struct Patterns {
    by_letters: HashMap<String, (usize, Vec<u8>)>,
    longest: usize,
}

impl Patterns {
    /// Reads the text of a `.dic` file: its first line names the encoding (only UTF-8 files
    /// are accepted by the caller), then one pattern per line; comments and the hyphen-minimum
    /// settings are skipped, as are patterns whose values are all zero.
    pub(crate) fn parse(text: &str) -> Patterns {
        const SKIPPED: [&str; 6] = [
            "%",
            "#",
            "LEFTHYPHENMIN",
            "RIGHTHYPHENMIN",
            "COMPOUNDLEFTHYPHENMIN",
            "COMPOUNDRIGHTHYPHENMIN",
        ];
        let mut patterns = Patterns::default();
        for line in text.split('\n').skip(1) {
            let line = line.trim();
            if line.is_empty() || SKIPPED.iter().any(|s| line.starts_with(s)) {
                continue;
            }
            // Nonstandard hyphenation (`pattern/change,index,cut`) only adds data to a point;
            // where the points are is decided by the pattern part.
            let pattern = line.split('/').next().unwrap_or(line);
            let (letters, values) = split_pattern(pattern);
            let Some(start) = values.iter().position(|v| *v != 0) else {
                continue;
            };
            let end = values
                .iter()
                .rposition(|v| *v != 0)
                .map_or(start, |e| e + 1);
            patterns.longest = patterns.longest.max(letters.chars().count());
            patterns
                .by_letters
                .insert(letters, (start, values[start..end].to_vec()));
        }
        patterns
    }

    /// The hyphenation points of `word` (lowercased here), as offsets in characters, at
    /// least two characters from either end.
    pub(crate) fn points(&self, word: &str) -> Vec<usize> {
        let pointed: Vec<char> = format!(".{}.", word.to_lowercase()).chars().collect();
        let mut values = vec![0u8; pointed.len() + 1];
        let mut key = String::new();
        for i in 0..pointed.len().saturating_sub(1) {
            let stop = (i + self.longest).min(pointed.len());
            key.clear();
            for c in &pointed[i..stop] {
                key.push(*c);
                let Some((offset, found)) = self.by_letters.get(&key) else {
                    continue;
                };
                for (k, value) in found.iter().enumerate() {
                    if let Some(slot) = values.get_mut(i + offset + k) {
                        *slot = (*slot).max(*value);
                    }
                }
            }
        }
        let length = word.chars().count();
        values
            .iter()
            .enumerate()
            .filter(|(_, value)| *value % 2 == 1)
            .filter_map(|(i, _)| i.checked_sub(1))
            .filter(|point| *point >= EDGE && *point + EDGE <= length)
            .collect()
    }
}

/// A pattern's letters and the digit before each letter and after the last (0 when none);
/// `^^hh` stands for the character with hexadecimal code `hh`.
fn split_pattern(pattern: &str) -> (String, Vec<u8>) {
    let chars = unescape(pattern);
    let mut letters = String::new();
    let mut values = Vec::new();
    let mut pending = None;
    for c in chars {
        match c.to_digit(10) {
            Some(d) if pending.is_none() => pending = Some(d as u8),
            _ => {
                values.push(pending.take().unwrap_or(0));
                letters.push(c);
            }
        }
    }
    values.push(pending.unwrap_or(0));
    (letters, values)
}

/// `pattern` with each `^^hh` replaced by the character it codes.
fn unescape(pattern: &str) -> Vec<char> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '^' && chars.get(i + 1) == Some(&'^') {
            let hex: String = chars[i + 2..(i + 4).min(chars.len())].iter().collect();
            let lower_hex =
                hex.len() == 2 && hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'));
            if let (true, Ok(code)) = (lower_hex, u32::from_str_radix(&hex, 16)) {
                if let Some(c) = char::from_u32(code) {
                    out.push(c);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_splits_into_letters_and_the_digits_between_them() {
        assert_eq!(
            split_pattern(".a2ch4"),
            (".ach".to_string(), vec![0, 0, 2, 0, 4])
        );
        assert_eq!(split_pattern("1ca"), ("ca".to_string(), vec![1, 0, 0]));
        assert_eq!(unescape("^^e9t"), vec!['é', 't']);
    }

    #[test]
    fn odd_values_are_points_and_the_edges_are_kept_clear() {
        // "hy3ph" and "he2n" style patterns in miniature: the odd 3 splits hy-phen, the even
        // 2 forbids a point, and a point one letter from the start is dropped.
        let patterns = Patterns::parse("UTF-8\nLEFTHYPHENMIN 2\n% comment\ny3ph\nh2e\n.h1y\n0a0\n");
        assert_eq!(patterns.points("hyphen"), vec![2]);
        assert_eq!(patterns.points("HYPHEN"), vec![2]);
        assert_eq!(patterns.points("hy"), Vec::<usize>::new());
        assert!(
            !patterns.by_letters.contains_key("a"),
            "all-zero patterns are skipped"
        );
    }
}
