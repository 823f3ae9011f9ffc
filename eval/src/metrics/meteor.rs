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
//! The synonym stage takes a [`Synonyms`] source: WordNet 3.0 as NLTK reads it
//! ([`super::wordnet`], what [`meteor_text`] uses when `scripts/setup.sh` installed it), or
//! [`NoSynonyms`], which matches nothing there. As in NLTK, that stage sees the Porter stems
//! the stem stage left, not the original words.

use super::tokenize::word_tokenize;
use mb_text::porter::stem;

pub use super::wordnet::{NoSynonyms, Synonyms};

const ALPHA: f64 = 0.9;
const BETA: f64 = 3.0;
const GAMMA: f64 = 0.5;

/// NLTK's `meteor_score(references, hypothesis)` on tokens (α 0.9, β 3, γ 0.5, lower-casing,
/// Porter stems, `synonyms` for WordNet): the best score over the references, 0 when nothing
/// matches (and, where NLTK raises on an empty list of references, 0 too).
pub fn meteor(references: &[Vec<String>], hypothesis: &[String], synonyms: &dyn Synonyms) -> f64 {
    references
        .iter()
        .map(|reference| single_meteor(reference, hypothesis, synonyms))
        .fold(f64::NEG_INFINITY, f64::max)
        .max(0.0)
}

/// Upstream's WritingPrompts metric: METEOR of `hypothesis` against one `reference`, both
/// tokenized with [`word_tokenize`], with the installed WordNet's synonyms
/// ([`super::wordnet::installed`]).
pub fn meteor_text(reference: &str, hypothesis: &str) -> f64 {
    meteor(
        &[word_tokenize(reference)],
        &word_tokenize(hypothesis),
        super::wordnet::installed(),
    )
}

/// An enumerated word: position in its sentence and (preprocessed) text.
type Enumerated = Vec<(usize, String)>;

/// NLTK's `single_meteor_score`: METEOR against one reference, which [`meteor`] maximises.
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
        text.split_whitespace().map(str::to_string).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn hand_computed_example() {
        // Hypothesis "the cats sat on a mat", reference "a cat sat on the mat today".
        // Exact stage, hypothesis words last to first, each taking the last equal reference
        // word: mat→mat (h5,r5), a→a (h4,r0), on→on (h3,r3), sat→sat (h2,r2), the→the (h0,r4).
        // Stem stage on what is left: cats→"cat" = cat→"cat" (h1,r1); "today" stays unmatched.
        // Matches by hypothesis position: (0,4) (1,1) (2,2) (3,3) (4,0) (5,5): chunks
        // [(0,4)] [(1,1) (2,2) (3,3)] [(4,0)] [(5,5)] = 4.
        // P = 6/6 = 1, R = 6/7, Fmean = P·R / (0.9·P + 0.1·R) = (6/7) / (0.9 + 0.6/7)
        //   = 6 / 6.9 = 0.869565…; penalty = 0.5 · (4/6)^3 = 0.5 · 8/27 = 4/27 = 0.148148…;
        // score = (1 − 4/27) · 6/6.9 = (23/27) · (60/69) = 0.740740…
        let score = meteor(
            &[words("a cat sat on the mat today")],
            &words("the cats sat on a mat"),
            &NoSynonyms,
        );
        let precision = 1.0;
        let recall = 6.0 / 7.0;
        let fmean = precision * recall / (0.9 * precision + (1.0 - 0.9) * recall);
        let expected = (1.0 - 0.5 * (4.0f64 / 6.0).powf(3.0)) * fmean;
        assert!(close(score, expected), "{score} vs {expected}");
        assert!((score - 0.740_740_740_740_7).abs() < 1e-9, "{score}");
    }

    #[test]
    fn identical_and_reordered() {
        // Identical 4-word sentences: P = R = Fmean = 1, one chunk of 4 matches:
        // penalty = 0.5 · (1/4)^3 = 0.0078125, score 0.9921875.
        let s = words("the cat sat down");
        assert!(close(
            meteor(std::slice::from_ref(&s), &s, &NoSynonyms),
            0.9921875
        ));
        // Swapped halves: 2 chunks of 2 matches: penalty 0.5 · (2/4)^3 = 0.0625.
        let score = meteor(&[words("a b c d")], &words("c d a b"), &NoSynonyms);
        assert!(close(score, 0.9375), "{score}");
        // Case is ignored: one match of one word, penalty 0.5 · 1^3.
        assert!(close(
            meteor(&[words("Heron")], &words("heron"), &NoSynonyms),
            0.5
        ));
    }

    #[test]
    fn repeated_words_follow_nltks_enumeration() {
        // Hypothesis "a b", reference "a b a": "b" takes r1, then "a" takes the LAST "a" (r2),
        // so the matches (0,2) (1,1) form 2 chunks, not 1: P = 1, R = 2/3,
        // Fmean = (2/3) / (0.9 + 0.1·2/3) = 0.689655…, penalty 0.5 · (2/2)^3 = 0.5.
        let score = meteor(&[words("a b a")], &words("a b"), &NoSynonyms);
        let fmean = (2.0 / 3.0) / (0.9 + (1.0 - 0.9) * (2.0 / 3.0));
        assert!(close(score, 0.5 * fmean), "{score}");
    }

    #[test]
    fn stem_only_match() {
        // "jumped" and "jumping" share the Porter stem "jump": one match of one word each,
        // P = R = Fmean = 1, penalty 0.5 · (1/1)^3: 0.5.
        assert_eq!(stem("jumped"), stem("jumping"));
        let score = meteor(&[words("jumping")], &words("jumped"), &NoSynonyms);
        assert!(close(score, 0.5), "{score}");
    }

    #[test]
    fn no_match_and_empty_inputs() {
        assert_eq!(meteor(&[words("x y")], &[], &NoSynonyms), 0.0);
        assert_eq!(meteor(&[Vec::new()], &words("x y"), &NoSynonyms), 0.0);
        assert_eq!(meteor(&[words("x y")], &words("p q"), &NoSynonyms), 0.0);
        assert_eq!(meteor(&[], &words("p q"), &NoSynonyms), 0.0);
        assert_eq!(meteor_text("", "anything at all"), 0.0);
        // The best reference counts.
        let best = meteor(&[words("p q"), words("x y")], &words("x y"), &NoSynonyms);
        assert!(close(
            best,
            meteor(&[words("x y")], &words("x y"), &NoSynonyms)
        ));
    }

    #[test]
    fn text_version_tokenizes_first() {
        // "The cat sat." → The cat sat . (4 tokens, all matched, one chunk).
        let score = meteor_text("The cat sat.", "the cat sat.");
        assert!(close(score, 0.9921875), "{score}");
    }

    #[test]
    fn synonyms_extend_the_alignment() {
        struct Small;
        impl Synonyms for Small {
            fn synonyms(&self, word: &str) -> Vec<String> {
                match word {
                    "dog" => vec!["domestic_dog".into(), "hound".into()],
                    _ => Vec::new(),
                }
            }
        }
        // "barks" and "a" match exactly first; "dog" then finds "hound" among its
        // synonyms ("domestic_dog" is dropped): 3 matches in one chunk, penalty 0.5·(1/3)^3.
        let reference = words("a hound barks");
        let hypothesis = words("a dog barks");
        let score = meteor(std::slice::from_ref(&reference), &hypothesis, &Small);
        assert!(close(score, 1.0 - 0.5 / 27.0), "{score}");
        assert!(meteor(&[reference], &hypothesis, &NoSynonyms) < score);
    }
}
