//! IdeaBench, scored as upstream's `evaluate_single` scores it: the answer split into its
//! hypotheses (padded to three with `NULL`), the one closest to the paper's abstract chosen, a
//! judge's 1–10 rating of how far it overlaps the abstract, the judge's rankings of the
//! abstract among all hypotheses by novelty and by feasibility, and then the merged 1–10 judge
//! over these. Upstream chooses the closest hypothesis by BERTScore, which needs a transformer
//! not shipped here; ROUGE-L F1 chooses it instead, and BERTScore stays "not computed"
//! (docs/parity.md).

use std::sync::LazyLock;

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::Row;
use mb_llm::ops::{Operation, Patience};
use mb_llm::{Message, Sampling};
use mb_upstream::python::strip;
use mb_upstream::{ideabench_fields, Upstream, UpstreamError};
use regex::Regex;
use serde_json::{json, Map, Value};

use super::merged::{MergedRubric, OverallJudge};
use super::scorers::{judged, MERGED_SCORE};
use super::shown::ShownMetric;
use super::{EvalError, Evaluator, Graders};
use crate::metrics::rouge::rouge_l_f1;

/// What separates the hypotheses of an answer: the dataset's own prompt asks for it (and a
/// test checks it against upstream's `IDEA_SEPARATOR`).
pub const IDEA_SEPARATOR: &str = "---IDEA-SEPARATOR---";

/// Hypotheses an answer is padded to, as upstream pads it.
const AT_LEAST: usize = 3;

/// The judge's sampling in every IdeaBench call: upstream's judge client (temperature 0 and
/// 1 024 tokens set, top-p its default 0.1).
fn judge_sampling() -> Sampling {
    Sampling::new(0.0, 0.1, 1024)
}

/// The hypotheses of `response`: its parts between separators, stripped, empty ones dropped,
/// padded with `NULL` to three.
pub(crate) fn hypotheses(response: &str) -> Vec<String> {
    let mut parts: Vec<String> = response
        .split(IDEA_SEPARATOR)
        .map(strip)
        .filter(|part| !part.is_empty())
        .map(str::to_string)
        .collect();
    while parts.len() < AT_LEAST {
        parts.push("NULL".to_string());
    }
    parts
}

/// A judge's rating of how far a hypothesis overlaps the paper's abstract: what upstream keeps
/// of the reply, `{"rating": …, "explanation": …}` as the judge wrote it, or a null rating with
/// the reply as the explanation when it is not JSON.
#[derive(Debug, Clone)]
pub struct IdeaRating {
    /// The hypothesis rated.
    pub hypothesis: String,
    /// The paper's abstract.
    pub abstract_: String,
}

impl Operation for IdeaRating {
    type Output = Value;

    fn name(&self) -> &'static str {
        "judge_idea_rating"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![Message::user(format!(
            "Compare the research hypothesis with the abstract of a paper and rate how much \
             their ideas overlap, from 1 (hardly at all) to 10 (the same idea).\n\n\
             Hypothesis:\n{}\n\nAbstract:\n{}\n\n\
             Reply with a JSON object with two keys: \"rating\" (an integer from 1 to 10) and \
             \"explanation\" (a string).",
            self.hypothesis, self.abstract_
        ))]
    }

    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.idea_rating(&self.hypothesis, &self.abstract_))
    }

    fn sampling(&self) -> Sampling {
        judge_sampling()
    }

    /// Upstream's reading: the first fenced JSON block when the reply has one, then JSON; an
    /// object is kept as it is, anything else gives a null rating (upstream's own fallback, or
    /// where upstream would raise on a JSON value that is no object).
    fn parse(&self, text: &str) -> Option<Value> {
        static FENCED: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"(?s)```json\n(.*?)\n```")
                .unwrap_or_else(|_| unreachable!("the pattern is valid"))
        });
        let body = if text.contains("```json") {
            FENCED
                .captures(text)
                .and_then(|c| c.get(1))
                .map(|m| m.as_str())
        } else {
            Some(text)
        };
        Some(
            match body.and_then(|b| serde_json::from_str::<Value>(b).ok()) {
                Some(object @ Value::Object(_)) => object,
                _ => json!({"rating": null, "explanation": body}),
            },
        )
    }

    /// Upstream asks once.
    fn patience(&self) -> Patience {
        Patience::FallBack
    }

    fn fallback(&self) -> Value {
        json!({"rating": null, "explanation": null})
    }

    fn offline(&self, _lang: Lang) -> Value {
        self.fallback()
    }
}

/// A judge's ranking of the paper's own idea (shown first, as hypothesis A) among the
/// generated hypotheses by one criterion: the place of A in the ranked list (1 is best; 0 when
/// the reply ranks nothing, or, where upstream would raise, ranks others but not A), the
/// letters in the order ranked, and the reply.
#[derive(Debug, Clone)]
pub struct IdeaRanking {
    /// "novelty" or "feasibility".
    pub criterion: &'static str,
    /// The generated hypotheses (B, C, …).
    pub hypotheses: Vec<String>,
    /// The paper's abstract (A).
    pub abstract_: String,
}

impl Operation for IdeaRanking {
    type Output = (usize, Vec<String>, String);

    fn name(&self) -> &'static str {
        "judge_idea_ranking"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        let candidates: Vec<String> = std::iter::once(&self.abstract_)
            .chain(&self.hypotheses)
            .enumerate()
            .map(|(i, text)| {
                let letter = char::from_u32(u32::from('A') + i as u32).unwrap_or('?');
                format!("**Hypothesis {letter}**:\n{text}")
            })
            .collect();
        vec![Message::user(format!(
            "Rank these research hypotheses by their {0}, the one with the most {0} first. \
             Answer with a numbered list naming each as it is named here, for example:\n\
             1. **Hypothesis B**: why\n2. **Hypothesis A**: why\n\nThe hypotheses:\n\n{1}",
            self.criterion,
            candidates.join("\n\n")
        ))]
    }

    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        let hypotheses: Vec<&str> = self.hypotheses.iter().map(String::as_str).collect();
        Some(upstream.idea_ranking(self.criterion, &self.abstract_, &hypotheses))
    }

    fn sampling(&self) -> Sampling {
        judge_sampling()
    }

    /// Upstream's reading: every `**Hypothesis X**` in order, A's place in that list.
    fn parse(&self, text: &str) -> Option<Self::Output> {
        static NAMED: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"\*\*\s*Hypothesis\s+([A-Z])\s*\*\*")
                .unwrap_or_else(|_| unreachable!("the pattern is valid"))
        });
        let ranking: Vec<String> = NAMED
            .captures_iter(text)
            .filter_map(|c| c.get(1).map(|m| m.as_str().to_string()))
            .collect();
        let place = ranking.iter().position(|l| l == "A").map_or(0, |at| at + 1);
        Some((place, ranking, text.to_string()))
    }

    /// Upstream asks once.
    fn patience(&self) -> Patience {
        Patience::FallBack
    }

    fn fallback(&self) -> Self::Output {
        (0, Vec::new(), String::new())
    }

    fn offline(&self, _lang: Lang) -> Self::Output {
        self.fallback()
    }
}

/// IdeaBench's evaluator: the rating, the two rankings and the merged judge score.
pub struct IdeaBenchScorer;

/// Where upstream's ranking score puts the place of the paper's idea among `count` hypotheses:
/// 0 when it ranks first.
fn ranking_score(place: usize, count: usize) -> f64 {
    (place as f64 - 1.0) / count as f64
}

#[async_trait]
impl Evaluator for IdeaBenchScorer {
    async fn evaluate(
        &self,
        row: &Row,
        response: &str,
        graders: Graders<'_>,
    ) -> Result<Map<String, Value>, EvalError> {
        let judge = graders.judge;
        let abstract_ = row
            .info
            .get("abstract")
            .and_then(Value::as_str)
            .ok_or_else(|| EvalError::BadItem {
                dataset: row.dataset.clone(),
                test_idx: row.test_idx,
                reason: "info has no abstract".into(),
            })?
            .to_string();
        let hypotheses = hypotheses(response);
        let mut best = 0;
        let mut best_f1 = f64::NEG_INFINITY;
        for (at, hypothesis) in hypotheses.iter().enumerate() {
            let f1 = rouge_l_f1(hypothesis, &abstract_);
            if f1 > best_f1 {
                (best, best_f1) = (at, f1);
            }
        }
        let best = hypotheses[best].clone();
        let metric = "llm_as_judge_score";
        let rating = IdeaRating {
            hypothesis: best.clone(),
            abstract_: abstract_.clone(),
        };
        let rating = judged(judge, row, metric, &rating).await?;
        let rank = |criterion| IdeaRanking {
            criterion,
            hypotheses: hypotheses.clone(),
            abstract_: abstract_.clone(),
        };
        let novelty = judged(judge, row, metric, &rank("novelty")).await?;
        let feasibility = judged(judge, row, metric, &rank("feasibility")).await?;
        let rating_score = rating.get("rating").cloned().unwrap_or(Value::Null);
        let novelty_score = ranking_score(novelty.0, hypotheses.len());
        let feasibility_score = ranking_score(feasibility.0, hypotheses.len());
        let merged = OverallJudge {
            rubric: MergedRubric::IdeaBench,
            input: row.input.query_text().to_string(),
            output: best.clone(),
            reference: abstract_,
            metrics: shown_metrics(&rating_score, novelty_score, feasibility_score),
            upstream_fields: ideabench_fields(
                None,
                &rating_score,
                novelty_score,
                feasibility_score,
            ),
        };
        let score = judged(judge, row, MERGED_SCORE, &merged).await?;
        let ranking = |(place, ranking, raw): (usize, Vec<String>, String)| json!({"r_target": place, "ranking": ranking, "raw_text": raw});
        let metrics = json!({
            "generated_hypotheses": hypotheses,
            "best_hypothesis_by_bertf1": best,
            "best_hypothesis_chosen_by": "rouge_l_f1 (BERTScore is not computed here)",
            "bert_score": null,
            "llm_rating_score": rating_score,
            "llm_novelty_ranking_score": novelty_score,
            "llm_feasibility_ranking_score": feasibility_score,
            "llm_rating": rating,
            "llm_novelty_ranking": ranking(novelty),
            "llm_feasibility_ranking": ranking(feasibility),
            MERGED_SCORE: score,
        });
        Ok(match metrics {
            Value::Object(map) => map,
            _ => Map::new(),
        })
    }

    fn concurrency(&self) -> usize {
        4
    }
}

/// The metrics our wording of the merged judge shows, with their meaning.
fn shown_metrics(rating: &Value, novelty: f64, feasibility: f64) -> Vec<ShownMetric> {
    vec![
        ShownMetric {
            name: "bert_score",
            value: Err("BERTScore needs a transformer model not shipped here"),
            meaning: "semantic similarity of the generated and the reference idea, 0.00 to 1.00",
        },
        ShownMetric {
            name: "llm_rating_score",
            value: rating.as_f64().ok_or("the judge gave no rating"),
            meaning: "a judge's rating of how far the ideas overlap, 1 to 10",
        },
        ShownMetric {
            name: "llm_novelty_ranking_score",
            value: Ok(novelty),
            meaning: "novelty against the reference idea: near 0.00 less novel, 0.50 comparable, near 1.00 more novel",
        },
        ShownMetric {
            name: "llm_feasibility_ranking_score",
            value: Ok(feasibility),
            meaning: "feasibility against the reference idea, read like the novelty score",
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_split_into_three_or_more_hypotheses() {
        let split = hypotheses(&format!(" one \n{IDEA_SEPARATOR}\n{IDEA_SEPARATOR} two "));
        assert_eq!(split, ["one", "two", "NULL"]);
        assert_eq!(hypotheses("").len(), 3);
        let many = ["x"; 5].join(IDEA_SEPARATOR);
        assert_eq!(hypotheses(&many).len(), 5);
    }

    #[test]
    fn ratings_and_rankings_read_as_upstream_reads_them() {
        let rating = IdeaRating {
            hypothesis: "h".into(),
            abstract_: "a".into(),
        };
        let fenced = "Here:\n```json\n{\"rating\": 7, \"explanation\": \"close\"}\n```";
        assert_eq!(rating.parse(fenced).unwrap()["rating"], 7);
        let prose = rating.parse("I rate it 7").unwrap();
        assert_eq!(prose, json!({"rating": null, "explanation": "I rate it 7"}));
        // A fence that does not close as upstream's pattern expects leaves nothing to read.
        let open = rating.parse("```json {\"rating\": 7}").unwrap();
        assert_eq!(open, json!({"rating": null, "explanation": null}));

        let ranking = IdeaRanking {
            criterion: "novelty",
            hypotheses: vec!["b".into(), "c".into(), "d".into()],
            abstract_: "a".into(),
        };
        let reply = "1. **Hypothesis C**: x\n2. ** Hypothesis A **: y\n3. **Hypothesis B**";
        let (place, order, _) = ranking.parse(reply).unwrap();
        assert_eq!(
            (place, order),
            (2, vec!["C".into(), "A".into(), "B".into()])
        );
        assert_eq!(ranking.parse("no list").unwrap().0, 0);
        assert_eq!(ranking.parse("1. **Hypothesis B**").unwrap().0, 0);
        assert!((ranking_score(2, 3) - 1.0 / 3.0).abs() < 1e-12);
        assert!((ranking_score(0, 3) + 1.0 / 3.0).abs() < 1e-12);
    }
}
