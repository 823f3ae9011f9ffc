//! NLTK's METEOR (`nltk.translate.meteor_score`), which WritingPrompts (and JuDGE's parts) are
//! scored with.
//!
//! Words are lower-cased and aligned in three stages, each matching what the previous left:
//! exact words, Porter stems, then WordNet synonyms. Within a stage NLTK scans hypothesis words
//! from the last to the first and pairs each with the last unmatched reference word it equals;
//! we do the same, so the alignment, and hence the chunk count, is NLTK's. The score is
//! `(1 − γ·(chunks/matches)^β) · P·R / (α·P + (1−α)·R)` with α 0.9, β 3, γ 0.5, the best over
//! references, and 0 when nothing matches.
//!
//! WordNet is data this machine cannot install, so the synonym stage takes a [`Synonyms`]
//! source; [`NoSynonyms`] (the default) matches nothing there. As in NLTK, that stage sees the
//! Porter stems the stem stage left, not the original words.

use super::porter::stem;
use super::tokenize::word_tokenize;

/// Where the synonym stage looks words up.
pub trait Synonyms {
    /// The lemma names of every WordNet synset of `word` (NLTK drops names containing `_`).
    fn synonyms(&self, word: &str) -> Vec<String>;
}

/// No synonym data: the synonym stage matches nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSynonyms;

impl Synonyms for NoSynonyms {
    fn synonyms(&self, _word: &str) -> Vec<String> {
        Vec::new()
    }
}

const ALPHA: f64 = 0.9;
const BETA: f64 = 3.0;
const GAMMA: f64 = 0.5;

/// `meteor_score(references, hypothesis)` on tokens: the best score over the references.
pub fn meteor(references: &[Vec<String>], hypothesis: &[String], synonyms: &dyn Synonyms) -> f64 {
    references
        .iter()
        .map(|reference| single_meteor(reference, hypothesis, synonyms))
        .fold(f64::NEG_INFINITY, f64::max)
        .max(0.0)
}

/// Upstream's WritingPrompts metric: METEOR of `hypothesis` against one `reference`, both
/// tokenized with [`word_tokenize`], without synonyms.
pub fn meteor_text(reference: &str, hypothesis: &str) -> f64 {
    meteor(
        &[word_tokenize(reference)],
        &word_tokenize(hypothesis),
        &NoSynonyms,
    )
}

/// An enumerated word: position in its sentence and (preprocessed) text.
type Enumerated = Vec<(usize, String)>;

/// NLTK's `single_meteor_score`.
pub fn single_meteor(reference: &[String], hypothesis: &[String], synonyms: &dyn Synonyms) -> f64 {
    let enumerate = |words: &[String]| -> Enumerated {
        words
            .iter()
            .enumerate()
            .map(|(i, w)| (i, w.to_lowercase()))
            .collect()
    };
    let (hyp, refs) = (enumerate(hypothesis), enumerate(reference));
    let (translation_length, reference_length) = (hyp.len(), refs.len());
    let (exact, hyp, refs) = match_words(hyp, refs, |h, r| h == r);
    let stemmed =
        |list: Enumerated| -> Enumerated { list.into_iter().map(|(i, w)| (i, stem(&w))).collect() };
    let (stems, hyp, refs) = match_words(stemmed(hyp), stemmed(refs), |h, r| h == r);
    let (synonym_matches, _, _) = match_synonyms(hyp, refs, synonyms);
    let mut matches: Vec<(usize, usize)> = exact
        .into_iter()
        .chain(stems)
        .chain(synonym_matches)
        .collect();
    // Python's `sorted` by hypothesis position is stable.
    matches.sort_by_key(|&(h, _)| h);
    let count = matches.len() as f64;
    if translation_length == 0 || reference_length == 0 || matches.is_empty() {
        return 0.0;
    }
    let precision = count / translation_length as f64;
    let recall = count / reference_length as f64;
    let fmean = (precision * recall) / (ALPHA * precision + (1.0 - ALPHA) * recall);
    let fragmentation = chunks(&matches) as f64 / count;
    let penalty = GAMMA * fragmentation.powf(BETA);
    (1.0 - penalty) * fmean
}

/// NLTK's `_match_enums` with a word comparison: hypothesis words last to first, each paired
/// with the last unmatched reference word it matches.
fn match_words(
    mut hyp: Enumerated,
    mut refs: Enumerated,
    same: impl Fn(&str, &str) -> bool,
) -> (Vec<(usize, usize)>, Enumerated, Enumerated) {
    let mut matched = Vec::new();
    for i in (0..hyp.len()).rev() {
        if let Some(j) = (0..refs.len()).rev().find(|&j| same(&hyp[i].1, &refs[j].1)) {
            matched.push((hyp[i].0, refs[j].0));
            hyp.remove(i);
            refs.remove(j);
        }
    }
    (matched, hyp, refs)
}

/// NLTK's `_enum_wordnetsyn_match`: a reference word matches a hypothesis word equal to it or
/// among its synonyms.
fn match_synonyms(
    hyp: Enumerated,
    refs: Enumerated,
    synonyms: &dyn Synonyms,
) -> (Vec<(usize, usize)>, Enumerated, Enumerated) {
    let mut hyp = hyp;
    let mut refs = refs;
    let mut matched = Vec::new();
    for i in (0..hyp.len()).rev() {
        let mut candidates: Vec<String> = synonyms
            .synonyms(&hyp[i].1)
            .into_iter()
            .filter(|name| !name.contains('_'))
            .collect();
        candidates.push(hyp[i].1.clone());
        if let Some(j) = (0..refs.len())
            .rev()
            .find(|&j| candidates.contains(&refs[j].1))
        {
            matched.push((hyp[i].0, refs[j].0));
            hyp.remove(i);
            refs.remove(j);
        }
    }
    (matched, hyp, refs)
}

/// Fewest chunks of matches adjacent in both sentences (NLTK's `_count_chunks`).
fn chunks(matches: &[(usize, usize)]) -> usize {
    1 + matches
        .windows(2)
        .filter(|w| !(w[1].0 == w[0].0 + 1 && w[1].1 == w[0].1 + 1))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn hand_computed_scores() {
        // Identical 4-word sentences: P = R = 1, Fmean = 1, one chunk over 4 matches:
        // penalty = 0.5 · (1/4)^3 = 0.0078125, score 0.9921875.
        let s = words("the cat sat down");
        assert!((meteor(std::slice::from_ref(&s), &s, &NoSynonyms) - 0.9921875).abs() < 1e-12);

        // Hypothesis "the cats sat" vs reference "the cat sat down": "the", "sat" exact,
        // "cats" ~ "cat" by stem; 3 matches, P = 1, R = 3/4,
        // Fmean = 0.75 / (0.9 + 0.1 · 0.75) = 0.7692307…, one chunk: penalty 0.5 · (1/3)^3.
        let score = meteor(
            &[words("the cat sat down")],
            &words("the cats sat"),
            &NoSynonyms,
        );
        let fmean = 0.75 / (0.9 * 1.0 + (1.0 - 0.9) * 0.75);
        let expected = (1.0 - 0.5 * (1.0f64 / 3.0).powf(3.0)) * fmean;
        assert!((score - expected).abs() < 1e-12, "{score} vs {expected}");

        // Swapped halves: 2 chunks of 2 matches: penalty 0.5 · (2/4)^3 = 0.0625.
        let score = meteor(&[words("a b c d")], &words("c d a b"), &NoSynonyms);
        assert!((score - 0.9375).abs() < 1e-12, "{score}");
    }

    #[test]
    fn edge_cases() {
        assert_eq!(meteor(&[words("x y")], &[], &NoSynonyms), 0.0);
        assert_eq!(meteor(&[words("x y")], &words("p q"), &NoSynonyms), 0.0);
        // The best reference counts.
        let best = meteor(&[words("p q"), words("x y")], &words("x y"), &NoSynonyms);
        assert!((best - meteor(&[words("x y")], &words("x y"), &NoSynonyms)).abs() < 1e-15);
        // Case is ignored.
        assert!(meteor(&[words("Heron")], &words("heron"), &NoSynonyms) > 0.0);
    }

    #[test]
    fn synonyms_extend_the_alignment() {
        struct Small;
        impl Synonyms for Small {
            fn synonyms(&self, word: &str) -> Vec<String> {
                match word {
                    "dog" => vec!["hound".into(), "domestic_dog".into()],
                    _ => Vec::new(),
                }
            }
        }
        // NLTK looks synonyms up on the stems the previous stage left ("hound" is its own stem).
        let reference = words("a hound barks");
        let hypothesis = words("a dog barks");
        assert!(
            meteor(std::slice::from_ref(&reference), &hypothesis, &Small)
                > meteor(&[reference], &hypothesis, &NoSynonyms)
        );
    }
}
