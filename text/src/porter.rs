//! The Porter stemmer exactly as NLTK's `PorterStemmer()` (its default `NLTK_EXTENSIONS` mode),
//! which LoCoMo's F1 applies to every token and the [`Analyzer::Stemmed`](crate::Analyzer)
//! analyzer to every term.
//!
//! NLTK departs from Porter's 1980 paper in documented ways that change stems: a pool of
//! irregular forms (`skies` → `sky`, `dying` → `die`), no stemming of words of two letters or
//! fewer, `ies`/`ied` → `ie` in four-letter words, `y` → `i` only after a consonant that is
//! not the first letter, `bli` → `ble` instead of `abli` → `able`, `alli` → `al` tried first and
//! re-stemmed, and the extra rules `fulli` → `ful` and `logi` → `log`. A rule list applies the
//! first rule whose suffix matches, and leaves the word alone when that rule's condition fails.

/// NLTK's stem of `word` (lowercased first).
pub fn stem(word: &str) -> String {
    let lower = word.to_lowercase();
    if let Some(irregular) = irregular(word) {
        return irregular.to_string();
    }
    if word.chars().count() <= 2 {
        return lower;
    }
    let mut w: Vec<char> = lower.chars().collect();
    w = step1a(w);
    w = step1b(w);
    w = step1c(w);
    w = step2(w);
    w = step3(w);
    w = step4(w);
    w = step5a(w);
    w = step5b(w);
    w.into_iter().collect()
}

/// NLTK's pool of irregular forms (looked up with the word as given, like NLTK).
fn irregular(word: &str) -> Option<&'static str> {
    Some(match word {
        "skies" | "sky" => "sky",
        "dying" => "die",
        "lying" => "lie",
        "tying" => "tie",
        "news" => "news",
        "innings" | "inning" => "inning",
        "outings" | "outing" => "outing",
        "cannings" | "canning" => "canning",
        "howe" => "howe",
        "proceed" => "proceed",
        "exceed" => "exceed",
        "succeed" => "succeed",
        _ => return None,
    })
}

fn is_consonant(w: &[char], i: usize) -> bool {
    match w[i] {
        'a' | 'e' | 'i' | 'o' | 'u' => false,
        'y' => i == 0 || !is_consonant(w, i - 1),
        _ => true,
    }
}

/// Porter's m: the number of vowel-consonant sequences.
fn measure(stem: &[char]) -> usize {
    let mut count = 0;
    let mut after_vowel = false;
    for i in 0..stem.len() {
        let consonant = is_consonant(stem, i);
        if after_vowel && consonant {
            count += 1;
        }
        after_vowel = !consonant;
    }
    count
}

fn contains_vowel(stem: &[char]) -> bool {
    (0..stem.len()).any(|i| !is_consonant(stem, i))
}

fn ends_double_consonant(w: &[char]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && is_consonant(w, n - 1)
}

/// Consonant-vowel-consonant ending (last not w, x or y), or NLTK's two-letter vowel-consonant.
fn ends_cvc(w: &[char]) -> bool {
    let n = w.len();
    (n >= 3
        && is_consonant(w, n - 3)
        && !is_consonant(w, n - 2)
        && is_consonant(w, n - 1)
        && !matches!(w[n - 1], 'w' | 'x' | 'y'))
        || (n == 2 && !is_consonant(w, 0) && is_consonant(w, 1))
}

/// Whether `w` ends with `suffix`, one of the rules' ASCII suffixes (so its length in bytes
/// is its length in characters; compared without allocating, as most words are checked
/// against dozens of suffixes).
fn ends_with(w: &[char], suffix: &str) -> bool {
    debug_assert!(suffix.is_ascii());
    let n = suffix.len();
    w.len() >= n
        && w[w.len() - n..]
            .iter()
            .zip(suffix.bytes())
            .all(|(c, b)| *c == char::from(b))
}

fn replace(w: &[char], suffix_len: usize, replacement: &str) -> Vec<char> {
    let mut out = w[..w.len() - suffix_len].to_vec();
    out.extend(replacement.chars());
    out
}

/// What a rule's condition sees: the stem left after removing the suffix.
type Condition<'a> = &'a dyn Fn(&[char]) -> bool;

/// NLTK's `_apply_rule_list`: the first rule whose suffix matches decides.
fn apply_rules(w: Vec<char>, rules: &[(&str, &str, Option<Condition>)]) -> Vec<char> {
    for (suffix, replacement, condition) in rules {
        if ends_with(&w, suffix) {
            let suffix_len = suffix.len();
            let stem = &w[..w.len() - suffix_len];
            return match condition {
                Some(holds) if !holds(stem) => w,
                _ => replace(&w, suffix_len, replacement),
            };
        }
    }
    w
}

fn step1a(w: Vec<char>) -> Vec<char> {
    if w.len() == 4 && ends_with(&w, "ies") {
        return replace(&w, 3, "ie");
    }
    apply_rules(
        w,
        &[
            ("sses", "ss", None),
            ("ies", "i", None),
            ("ss", "ss", None),
            ("s", "", None),
        ],
    )
}

fn step1b(w: Vec<char>) -> Vec<char> {
    if ends_with(&w, "ied") {
        return replace(&w, 3, if w.len() == 4 { "ie" } else { "i" });
    }
    if ends_with(&w, "eed") {
        let stem = &w[..w.len() - 3];
        return if measure(stem) > 0 {
            replace(&w, 1, "")
        } else {
            w
        };
    }
    let Some(stem) = ["ed", "ing"].iter().find_map(|suffix| {
        let stem = &w[..w.len().saturating_sub(suffix.len())];
        (ends_with(&w, suffix) && contains_vowel(stem)).then(|| stem.to_vec())
    }) else {
        return w;
    };
    for (suffix, add) in [("at", "ate"), ("bl", "ble"), ("iz", "ize")] {
        if ends_with(&stem, suffix) {
            return replace(&stem, 2, add);
        }
    }
    if ends_double_consonant(&stem) {
        return if matches!(stem[stem.len() - 1], 'l' | 's' | 'z') {
            stem
        } else {
            stem[..stem.len() - 1].to_vec()
        };
    }
    if measure(&stem) == 1 && ends_cvc(&stem) {
        let mut stem = stem;
        stem.push('e');
        return stem;
    }
    stem
}

fn step1c(w: Vec<char>) -> Vec<char> {
    let after_consonant = |stem: &[char]| stem.len() > 1 && is_consonant(stem, stem.len() - 1);
    apply_rules(w, &[("y", "i", Some(&after_consonant))])
}

fn step2(w: Vec<char>) -> Vec<char> {
    let positive = |stem: &[char]| measure(stem) > 0;
    if ends_with(&w, "alli") && positive(&w[..w.len() - 4]) {
        return step2(replace(&w, 4, "al"));
    }
    let logi_stem = w.len().checked_sub(3).map(|end| w[..end].to_vec());
    let logi = move |_: &[char]| logi_stem.as_deref().is_some_and(|s| measure(s) > 0);
    apply_rules(
        w,
        &[
            ("ational", "ate", Some(&positive)),
            ("tional", "tion", Some(&positive)),
            ("enci", "ence", Some(&positive)),
            ("anci", "ance", Some(&positive)),
            ("izer", "ize", Some(&positive)),
            ("bli", "ble", Some(&positive)),
            ("alli", "al", Some(&positive)),
            ("entli", "ent", Some(&positive)),
            ("eli", "e", Some(&positive)),
            ("ousli", "ous", Some(&positive)),
            ("ization", "ize", Some(&positive)),
            ("ation", "ate", Some(&positive)),
            ("ator", "ate", Some(&positive)),
            ("alism", "al", Some(&positive)),
            ("iveness", "ive", Some(&positive)),
            ("fulness", "ful", Some(&positive)),
            ("ousness", "ous", Some(&positive)),
            ("aliti", "al", Some(&positive)),
            ("iviti", "ive", Some(&positive)),
            ("biliti", "ble", Some(&positive)),
            ("fulli", "ful", Some(&positive)),
            ("logi", "log", Some(&logi)),
        ],
    )
}

fn step3(w: Vec<char>) -> Vec<char> {
    let positive = |stem: &[char]| measure(stem) > 0;
    apply_rules(
        w,
        &[
            ("icate", "ic", Some(&positive)),
            ("ative", "", Some(&positive)),
            ("alize", "al", Some(&positive)),
            ("iciti", "ic", Some(&positive)),
            ("ical", "ic", Some(&positive)),
            ("ful", "", Some(&positive)),
            ("ness", "", Some(&positive)),
        ],
    )
}

fn step4(w: Vec<char>) -> Vec<char> {
    let above_one = |stem: &[char]| measure(stem) > 1;
    let ion = |stem: &[char]| measure(stem) > 1 && matches!(stem.last(), Some('s' | 't'));
    let mut rules: Vec<(&str, &str, Option<Condition>)> = [
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    ]
    .iter()
    .map(|s| (*s, "", Some(&above_one as Condition)))
    .collect();
    rules.push(("ion", "", Some(&ion)));
    rules.extend(
        ["ou", "ism", "ate", "iti", "ous", "ive", "ize"]
            .iter()
            .map(|s| (*s, "", Some(&above_one as Condition))),
    );
    apply_rules(w, &rules)
}

fn step5a(w: Vec<char>) -> Vec<char> {
    if ends_with(&w, "e") {
        let stem = &w[..w.len() - 1];
        let m = measure(stem);
        if m > 1 || (m == 1 && !ends_cvc(stem)) {
            return stem.to_vec();
        }
    }
    w
}

fn step5b(w: Vec<char>) -> Vec<char> {
    let whole = w.clone();
    let above_one = move |_: &[char]| measure(&whole[..whole.len() - 1]) > 1;
    apply_rules(w, &[("ll", "l", Some(&above_one))])
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn paper_examples_and_nltk_extensions() {
        for (word, expected) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "tie"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("skies", "sky"),
            ("dying", "die"),
            ("is", "is"),
            ("generalization", "gener"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
    }
}
