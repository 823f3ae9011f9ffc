//! JuDGE's rule-based metrics (Chinese criminal judgments), as upstream's
//! `src/dataset/judge/calc_score.py` `Evaluator.evaluate` computes them, BERTScore excepted
//! (it needs a BERT model; its two fields stay `None`, "not computed").
//!
//! Both texts are cut into reasoning and judgment by upstream's segmenter ([`segment()`]); from
//! each the charges ([`crime`], against upstream's charge lexicon), the months of the sentence
//! and the yuan of the fines ([`sentence`], numbers read as chinese2digits reads them:
//! [`numbers`]) and the cited articles ([`law`]) are extracted, then compared ([`scores`]);
//! the two sections are also scored with METEOR over jieba's words.
//!
//! The charge lexicon is upstream's data, which the project does not copy: it is read from an
//! upstream checkout ([`Upstream::judge_lexicon`]), so without one the metrics are not computed.

mod crime;
mod html;
mod law;
pub mod numbers;
mod pytext;
mod scores;
pub mod segment;
mod sentence;

use std::sync::OnceLock;

use jieba_rs::Jieba;
use mb_upstream::{JudgeLexicon, Upstream, UpstreamError};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use serde::{Deserialize, Serialize};

use crate::metrics::meteor::meteor;
use crate::metrics::rouge::segment;

/// Why the legal metrics of a pair of texts could not be computed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LegalError {
    /// The charge lexicon could not be read from the upstream checkout.
    #[error("JuDGE's lexicon: {0}")]
    Lexicon(#[from] UpstreamError),
    /// The text holds HTML markup, which upstream's BeautifulSoup pass rewrites and this port
    /// does not imitate (the characters where it starts).
    #[error("the text holds HTML markup at {0:?}, which is not imitated")]
    Markup(String),
    /// chinese2digits raises on a number upstream converts, so upstream's evaluation fails.
    #[error(transparent)]
    Number(#[from] numbers::NumberError),
    /// Python's `int()` raises on a number chinese2digits returned (a fraction in a sentence).
    #[error("upstream's int() fails on {0:?}")]
    Int(String),
    /// An extracted charge is empty, where upstream indexes its first character.
    #[error("an extracted charge {0:?} is empty")]
    EmptyCharge(String),
    /// A sentence or fine is beyond what the scores carry (`i128`).
    #[error("the number {0} is too large")]
    TooLarge(String),
    /// A built-in pattern did not compile (a bug).
    #[error("a built-in pattern: {0}")]
    Pattern(String),
}

/// What upstream's `Evaluator.evaluate` returns for one generated judgment against the
/// expected one, under its keys; `None` where upstream gives `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegalScores {
    /// BERTScore F1 of the reasoning sections: not computed (no BERT model), always `None`.
    pub reasoning_bert_score: Option<f64>,
    /// BERTScore F1 of the judgment sections: not computed, always `None`.
    pub judge_bert_score: Option<f64>,
    /// METEOR of the generated reasoning against the expected one, over jieba's words; `None`
    /// when any of the four sections is empty.
    pub reasoning_meteor: Option<f64>,
    /// METEOR of the judgment sections; `None` as `reasoning_meteor`.
    pub judge_meteor: Option<f64>,
    /// The expected text's reasoning section.
    pub exp_reasoning: String,
    /// The expected text's judgment section.
    pub exp_judge: String,
    /// The generated text's reasoning section.
    pub gen_reasoning: String,
    /// The generated text's judgment section.
    pub gen_judge: String,
    /// Share of the expected charges the generated text names.
    pub crime_recall: f64,
    /// Share of the generated charges that are expected.
    pub crime_precision: f64,
    /// Closeness of the sentences' months; `None` when neither text has a sentence.
    pub time_score: Option<f64>,
    /// Closeness of the fines' yuan; `None` when neither text has a fine.
    pub amount_score: Option<f64>,
    /// Share of the expected articles the generated text cites.
    pub penalcode_index_recall: f64,
    /// Share of the cited articles that are expected.
    pub penalcode_index_precision: f64,
    /// The expected charges (a set; sorted).
    pub exp_crime: Vec<String>,
    /// The generated charges (a set; sorted).
    pub gen_crime: Vec<String>,
    /// The expected sentence in months (240 for life, 10001 per death sentence), -1 for none.
    pub exp_time: i128,
    /// The generated sentence in months, as `exp_time`.
    pub gen_time: i128,
    /// The expected fines in yuan, -1 for none.
    pub exp_amount: i128,
    /// The generated fines in yuan, -1 for none.
    pub gen_amount: i128,
    /// The expected articles' numbers (a set of digit strings; sorted).
    pub exp_penalcode_index: Vec<String>,
    /// The generated articles' numbers.
    pub gen_penalcode_index: Vec<String>,
}

/// JuDGE's rule-based metrics of `generated` against `expected`, with the charge lexicon of
/// the `upstream` checkout.
pub fn judge_scores(
    upstream: &Upstream,
    generated: &str,
    expected: &str,
) -> Result<LegalScores, LegalError> {
    judge_scores_with(upstream.judge_lexicon()?, generated, expected)
}

/// The extracted fields of one text.
struct Extracted {
    sections: segment::Sections,
    charges: Vec<String>,
    months: BigInt,
    yuan: BigInt,
    articles: Vec<String>,
}

fn extract(lexicon: &JudgeLexicon, text: &str) -> Result<Extracted, LegalError> {
    let sections = segment::sections(text)?;
    Ok(Extracted {
        charges: crime::charges(lexicon, text, &sections)?,
        months: sentence::time_sum(text, &sections)?,
        yuan: sentence::amount_sum(text, &sections)?,
        articles: law::article_numbers(text, &sections)?,
        sections,
    })
}

/// [`judge_scores`] with a lexicon already read.
pub fn judge_scores_with(
    lexicon: &JudgeLexicon,
    generated: &str,
    expected: &str,
) -> Result<LegalScores, LegalError> {
    let exp = extract(lexicon, expected)?;
    let gen = extract(lexicon, generated)?;
    let (crime_recall, crime_precision) = scores::recall_precision(&exp.charges, &gen.charges);
    let (penalcode_index_recall, penalcode_index_precision) =
        scores::recall_precision(&exp.articles, &gen.articles);
    let sections = [
        &exp.sections.reasoning,
        &exp.sections.judgment,
        &gen.sections.reasoning,
        &gen.sections.judgment,
    ];
    let (reasoning_meteor, judge_meteor) = if sections.iter().any(|s| s.is_empty()) {
        (None, None)
    } else {
        (
            Some(jieba_meteor(
                &exp.sections.reasoning,
                &gen.sections.reasoning,
            )),
            Some(jieba_meteor(&exp.sections.judgment, &gen.sections.judgment)),
        )
    };
    let small = |n: &BigInt| {
        n.to_i128()
            .ok_or_else(|| LegalError::TooLarge(n.to_string()))
    };
    Ok(LegalScores {
        reasoning_bert_score: None,
        judge_bert_score: None,
        reasoning_meteor,
        judge_meteor,
        crime_recall,
        crime_precision,
        time_score: scores::closeness(&exp.months, &gen.months),
        amount_score: scores::closeness(&exp.yuan, &gen.yuan),
        penalcode_index_recall,
        penalcode_index_precision,
        exp_time: small(&exp.months)?,
        gen_time: small(&gen.months)?,
        exp_amount: small(&exp.yuan)?,
        gen_amount: small(&gen.yuan)?,
        exp_crime: exp.charges,
        gen_crime: gen.charges,
        exp_penalcode_index: exp.articles,
        gen_penalcode_index: gen.articles,
        exp_reasoning: exp.sections.reasoning,
        exp_judge: exp.sections.judgment,
        gen_reasoning: gen.sections.reasoning,
        gen_judge: gen.sections.judgment,
    })
}

/// `calculate_meteor`: NLTK's METEOR over `list(jieba.cut(text))` (precise mode, HMM on),
/// with the installed WordNet's synonyms (it has no Chinese words, but numbers and Latin words
/// inside a judgment can have some).
fn jieba_meteor(reference: &str, hypothesis: &str) -> f64 {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    let jieba = JIEBA.get_or_init(Jieba::new);
    let reference = segment(jieba, reference);
    meteor(
        &[reference],
        &segment(jieba, hypothesis),
        crate::metrics::wordnet::installed(),
    )
}
