//! Upstream's judges of the datasets scored by a model beside their computed metrics:
//! WritingBench's critic, the merged 1–10 judges of JRE-L, JuDGE and IdeaBench, IdeaBench's
//! rating and rankings of research ideas, and LimitGen's three checks of a limitation.

use mb_core::Message;
use serde_json::Value;

use crate::catalog::{LimitAspect, Prompt};
use crate::checkout::request;
use crate::python::{fixed, repr_json};
use crate::{Upstream, UpstreamError};

/// How upstream writes a metric missing from its scores into a merged judge's prompt (JuDGE's
/// own word for one; used here for the metrics this project cannot compute).
const MISSING: &str = "None";

/// JuDGE's metric fields, in its template's order.
pub const JUDGE_METRICS: [&str; 10] = [
    "time_score",
    "amount_score",
    "crime_recall",
    "crime_precision",
    "penalcode_index_recall",
    "penalcode_index_precision",
    "reasoning_meteor",
    "reasoning_bert_score",
    "judge_meteor",
    "judge_bert_score",
];

/// A metric as upstream writes it into a merged judge's prompt (`f"{x:.4f}"`), or [`MISSING`].
fn four_places(value: Option<f64>) -> String {
    value.map_or_else(|| MISSING.to_string(), |x| fixed(x, 4))
}

/// JRE-L's metric fields as its merged judge shows them: each value to four places; one not
/// computed (BERTScore here, the readability scores without their word lists) as `None`.
pub fn jre_l_fields(
    rouge_l: f64,
    bert_f1: Option<f64>,
    cli: f64,
    fkgl: Option<f64>,
    dcrs: Option<f64>,
) -> Vec<(&'static str, String)> {
    vec![
        ("ROUGE_L", fixed(rouge_l, 4)),
        ("BERTSCORE_F1", four_places(bert_f1)),
        ("CLI", fixed(cli, 4)),
        ("FKGL", four_places(fkgl)),
        ("DCRS", four_places(dcrs)),
    ]
}

/// JuDGE's metric fields as its merged judge shows them. Upstream's `get_val` writes
/// `time_score`'s value, to four places, for every metric its scores have (`present`), and
/// `None` for the others; where `time_score` itself is `None` upstream's format raises, and
/// `None` is written instead.
pub fn judge_fields(present: &[&str], time_score: Option<f64>) -> Vec<(&'static str, String)> {
    JUDGE_METRICS
        .iter()
        .map(|name| {
            let value = if present.contains(name) {
                four_places(time_score)
            } else {
                MISSING.to_string()
            };
            (*name, value)
        })
        .collect()
}

/// IdeaBench's metric fields as its merged judge shows them: BERTScore and the two ranking
/// scores to four places (BERTScore `None` when not computed), the rating as Python's `str()`
/// of what the judge's JSON held, `N/A` when it held none.
pub fn ideabench_fields(
    bert: Option<f64>,
    rating: &Value,
    novelty: f64,
    feasibility: f64,
) -> Vec<(&'static str, String)> {
    let rating = match rating {
        Value::Null => "N/A".to_string(),
        Value::String(text) => text.clone(),
        other => repr_json(other),
    };
    vec![
        ("bert_score", four_places(bert)),
        ("llm_rating_score", rating),
        ("llm_novelty_ranking_score", fixed(novelty, 4)),
        ("llm_feasibility_ranking_score", fixed(feasibility, 4)),
    ]
}

/// A dataset whose domain and task summaries take one merged 1–10 judge score, computed by a
/// judge that sees the task, the output, the reference and the dataset's other metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergedOf {
    /// JRE-L (popular-science articles).
    JreL,
    /// JuDGE (criminal judgments).
    Judge,
    /// IdeaBench (research ideas).
    IdeaBench,
}

impl MergedOf {
    /// The prompt, its system message, and the names its template gives the task input, the
    /// output judged and the reference.
    fn template(self) -> (Prompt, Prompt, [&'static str; 3]) {
        match self {
            MergedOf::JreL => (
                Prompt::MergedJreL,
                Prompt::MergedJreLSystem,
                ["INPUT_TEXT", "GENERATED_ARTICLE", "GOLDEN_PASSAGE"],
            ),
            MergedOf::Judge => (
                Prompt::MergedJudge,
                Prompt::MergedJudgeSystem,
                ["INPUT_FACTS", "GENERATED_JUDGMENT", "GOLDEN_JUDGMENT"],
            ),
            MergedOf::IdeaBench => (
                Prompt::MergedIdeaBench,
                Prompt::MergedIdeaBenchSystem,
                ["INPUT_CONTEXT", "GENERATED_IDEA", "GOLDEN_IDEA"],
            ),
        }
    }
}

impl Upstream {
    /// WritingBench's critic request: its system message, and its prompt filled with the
    /// `criteria` (as Python's `str()` writes the row's criteria), the `query` and the
    /// `response`.
    pub fn critic(
        &self,
        criteria: &str,
        query: &str,
        response: &str,
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::CriticSystem)?.text()?;
        let prompt = self.render(
            Prompt::CriticUser,
            &[
                ("criteria", criteria),
                ("query", query),
                ("response", response),
            ],
        )?;
        Ok(request(system, prompt))
    }

    /// The merged judge request of `of`: the task `input`, the `output` judged, the
    /// `reference`, and each metric field of the dataset's template with the text upstream
    /// fills it with ([`jre_l_fields`], [`judge_fields`], [`ideabench_fields`]).
    pub fn merged_judge(
        &self,
        of: MergedOf,
        input: &str,
        output: &str,
        reference: &str,
        metrics: &[(&'static str, String)],
    ) -> Result<Vec<Message>, UpstreamError> {
        let (prompt, system, [input_field, output_field, reference_field]) = of.template();
        let mut values = vec![
            (input_field, input),
            (output_field, output),
            (reference_field, reference),
        ];
        values.extend(
            metrics
                .iter()
                .map(|(field, value)| (*field, value.as_str())),
        );
        let prompt = self.render(prompt, &values)?;
        Ok(request(self.template(system)?.text()?, prompt))
    }

    /// IdeaBench's request for a 1–10 rating of how far `hypothesis` overlaps the paper's
    /// `abstract_`: one user message.
    pub fn idea_rating(
        &self,
        hypothesis: &str,
        abstract_: &str,
    ) -> Result<Vec<Message>, UpstreamError> {
        let prompt = self.render(
            Prompt::IdeaRating,
            &[("hypothesis", hypothesis), ("abstract", abstract_)],
        )?;
        Ok(vec![Message::user(prompt)])
    }

    /// IdeaBench's request to rank the paper's own idea (`abstract_`, shown first as
    /// hypothesis A) among the generated `hypotheses` (B, C, …) by `criterion` ("novelty" or
    /// "feasibility"): one user message.
    pub fn idea_ranking(
        &self,
        criterion: &str,
        abstract_: &str,
        hypotheses: &[&str],
    ) -> Result<Vec<Message>, UpstreamError> {
        let mut candidates =
            vec![self.render(Prompt::IdeaRankingTarget, &[("abstract", abstract_)])?];
        for (i, hypothesis) in hypotheses.iter().enumerate() {
            // Python's chr(ord('A') + i + 1): past Z it goes on through the code points.
            let letter = u32::try_from(i)
                .ok()
                .and_then(|i| char::from_u32(u32::from('B') + i))
                .ok_or_else(|| UpstreamError::Field {
                    prompt: "ideabench.ranking.candidate",
                    message: format!("hypothesis #{} has no letter", i + 1),
                })?;
            candidates.push(self.render(
                Prompt::IdeaRankingCandidate,
                &[("letter", &letter.to_string()), ("hyp", hypothesis)],
            )?);
        }
        let join = self.template(Prompt::IdeaRankingJoin)?.text()?;
        let head = self.render(Prompt::IdeaRankingHead, &[("ranking_criteria", criterion)])?;
        let prompt = self.render(
            Prompt::IdeaRankingFrame,
            &[
                (
                    "RANKING_PROMPT_PREFIX.format(ranking_criteria=criteria)",
                    &head,
                ),
                ("candidates_text", &candidates.join(&join)),
            ],
        )?;
        Ok(vec![Message::user(prompt)])
    }

    /// What separates the hypotheses of an IdeaBench answer (the dataset's prompt asks for
    /// it).
    pub fn idea_separator(&self) -> Result<String, UpstreamError> {
        self.template(Prompt::IdeaSeparator)?.text()
    }

    /// LimitGen's check that a `limitation` concerns the `aspect` of the paper: a system
    /// message naming the aspect, the limitation as the user message.
    pub fn limitgen_aspect_check(
        &self,
        aspect: LimitAspect,
        limitation: &str,
    ) -> Result<Vec<Message>, UpstreamError> {
        let name = self.template(Prompt::LimitGenAspect(aspect))?.text()?;
        let system = self.render(Prompt::LimitGenAspectCheck, &[("aspect", &name)])?;
        Ok(request(system, limitation.to_string()))
    }

    /// LimitGen's classification of a `limitation` into the subtypes of its `aspect`.
    pub fn limitgen_subtypes(
        &self,
        aspect: LimitAspect,
        limitation: &str,
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::LimitGenSubtypes(aspect))?.text()?;
        Ok(request(system, limitation.to_string()))
    }

    /// LimitGen's 1–5 rating of a generated `limitation` against the `ground_truth` one.
    pub fn limitgen_rating(
        &self,
        ground_truth: &str,
        limitation: &str,
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::LimitGenRatingSystem)?.text()?;
        let user = self.render(
            Prompt::LimitGenRatingUser,
            &[
                ("info['ground_truth']", ground_truth),
                ("limit", limitation),
            ],
        )?;
        Ok(request(system, user))
    }
}
