//! The merged 1–10 score of datasets with several metrics (JuDGE, IdeaBench, JRE-L), which
//! domain and task summaries use: one judge call given the task input, the output, the
//! reference and the computed metrics with their meaning, under a rubric of the dataset's own
//! (a legal one, a research-idea one, a science-communication one). In our wording, a metric
//! this project cannot compute (it needs a model or a resource not shipped here) is passed as
//! "not computed", with the reason; in upstream's (`--upstream`), every metric is written as
//! upstream writes it (`mb_upstream::jre_l_fields` and its siblings), a missing one as `None`.

use mb_core::Lang;
use mb_llm::ops::{Operation, Patience};
use mb_llm::{Message, Sampling};
use mb_upstream::{jre_l_fields, judge_fields, MergedOf, Upstream, UpstreamError};

use super::shown::{shown, ShownMetric, NO_BERTSCORE};
use crate::metrics::judged::first_score_1_to_10;
use crate::metrics::readability::{coleman_liau, readability};
use crate::metrics::rouge::rouge_l_f1;

/// Which dataset's rubric a merged judge applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergedRubric {
    /// JuDGE: Chinese criminal judgments, judged as legal documents.
    Judge,
    /// IdeaBench: research ideas, judged as a researcher would.
    IdeaBench,
    /// JRE-L: popular-science articles, judged for science communication.
    JreL,
}

impl MergedRubric {
    /// Upstream's merged judge of the same dataset.
    pub fn upstream(self) -> MergedOf {
        match self {
            MergedRubric::Judge => MergedOf::Judge,
            MergedRubric::IdeaBench => MergedOf::IdeaBench,
            MergedRubric::JreL => MergedOf::JreL,
        }
    }

    /// The rubric of the dataset `name` (the names upstream uses), if it has one.
    pub fn of(name: &str) -> Option<MergedRubric> {
        match name {
            "JuDGE" => Some(MergedRubric::Judge),
            "IdeaBench" => Some(MergedRubric::IdeaBench),
            "JRE-L" | "JRE_L" => Some(MergedRubric::JreL),
            _ => None,
        }
    }

    /// The metrics shown for `output` against `reference`: those computed here with their
    /// values, the others with the reason they are missing (JRE-L's and JuDGE's; IdeaBench's
    /// come from its own judge calls).
    pub fn metrics(self, output: &str, reference: &str) -> Vec<ShownMetric> {
        let missing = |name, why, meaning| shown(name, Err(why), meaning);
        match self {
            // Without the lexicon; the scorer shows the computed ones (`super::legal`).
            MergedRubric::Judge => super::legal::shown(Err(super::legal::NO_LEXICON)),
            // IdeaBench's come from its own judge calls (`super::ideabench`).
            MergedRubric::IdeaBench => Vec::new(),
            MergedRubric::JreL => {
                let readable = readability(output);
                vec![
                ShownMetric {
                    name: "Rouge-L",
                    value: Ok(rouge_l_f1(output, reference)),
                    meaning: "overlap of the longest common word sequence with the reference, 0.00 to 1.00; higher means the content is better preserved",
                },
                missing("BERTScore-F1", NO_BERTSCORE, "semantic similarity to the reference, 0.00 to 1.00"),
                shown("CLI", Ok(coleman_liau(output)), "Coleman-Liau grade level; for popular science about 8 to 12 is desirable, lower reads more easily"),
                shown("FKGL", readable.map(|r| r.fkgl), "Flesch-Kincaid grade level; 8 to 12 is standard readability for a general audience"),
                shown("DCRS", readable.map(|r| r.dcrs), "Dale-Chall score; 4.9 or lower is very easy, 9.0 to 9.9 is college level"),
                ]
            }
        }
    }

    /// The metric fields of upstream's prompt for `output` against `reference` (JRE-L's and
    /// JuDGE's; IdeaBench's come from its own judge calls, see `super::ideabench`).
    pub fn upstream_fields(self, output: &str, reference: &str) -> Vec<(&'static str, String)> {
        match self {
            MergedRubric::JreL => {
                let readable = readability(output).ok();
                jre_l_fields(
                    rouge_l_f1(output, reference),
                    None,
                    coleman_liau(output),
                    readable.as_ref().map(|r| r.fkgl),
                    readable.as_ref().map(|r| r.dcrs),
                )
            }
            // Without the charge lexicon upstream's scores lack them (the scorer passes the
            // computed ones, `super::legal`).
            MergedRubric::Judge => judge_fields(&[], None),
            MergedRubric::IdeaBench => Vec::new(),
        }
    }

    /// The judge's role, the headings of input, output and reference, what is judged, and the
    /// two anchors of the scale.
    fn wording(self) -> [&'static str; 7] {
        match self {
            MergedRubric::Judge => [
                "You are an expert in law. Judge the quality of a criminal judgment that was written automatically, from the case facts, a reference judgment and the metrics below.",
                "Case facts (input)",
                "Generated judgment (output)",
                "Reference judgment",
                "the generated judgment",
                "1: very poor (irrelevant, wrong on the facts, or incoherent)",
                "10: excellent (legally sound, accurate on the facts, well reasoned and well structured, hardly distinguishable from the reference)",
            ],
            MergedRubric::IdeaBench => [
                "You are an expert researcher. Judge the overall quality of a research idea that was generated automatically, from the background, a reference idea and the metrics below.",
                "Background (input)",
                "Generated research idea (output)",
                "Reference research idea",
                "the generated research idea",
                "1: very poor (incoherent, irrelevant or wrong)",
                "10: excellent (coherent, insightful, novel, feasible and true to the background, hardly distinguishable from an expert's idea)",
            ],
            MergedRubric::JreL => [
                "You are an expert in science communication. Judge the quality of a popular-science article that was written automatically, from the source document, the abstract of a reference article and the metrics below.",
                "Source document (input)",
                "Generated popular-science article (output)",
                "Abstract of the reference article",
                "the generated article: its accuracy, readability, coherence and faithfulness to the source",
                "1: very poor (irrelevant, wrong, incoherent or unreadable)",
                "10: excellent (accurate, easy for a lay reader, well structured, engaging and faithful to the source, hardly distinguishable from the reference)",
            ],
        }
    }
}

/// The merged judge of one output: a 1–10 integer (the first in the reply); 0 after three
/// unusable replies, as upstream.
#[derive(Debug, Clone)]
pub struct OverallJudge {
    /// The dataset's rubric.
    pub rubric: MergedRubric,
    /// The task input.
    pub input: String,
    /// The system's output (IdeaBench: the idea judged).
    pub output: String,
    /// The reference output.
    pub reference: String,
    /// The metrics shown, computed or not.
    pub metrics: Vec<ShownMetric>,
    /// The same metrics as upstream's prompt shows them (its field names and text).
    pub upstream_fields: Vec<(&'static str, String)>,
}

impl Operation for OverallJudge {
    type Output = u8;

    fn name(&self) -> &'static str {
        "judge_overall"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        let [role, input, output, reference, judged, low, high] = self.rubric.wording();
        let metrics: String = self
            .metrics
            .iter()
            .map(|m| match &m.value {
                Ok(value) => format!("- {}: {value:.4} ({})\n", m.name, m.meaning),
                Err(why) => format!("- {}: not computed, {why} ({})\n", m.name, m.meaning),
            })
            .collect();
        vec![
            Message::system("You are a helpful assistant."),
            Message::user(format!(
                "{role}\n\n## {input}\n{}\n\n## {output}\n{}\n\n## {reference}\n{}\n\n\
                 ## Metrics\nComputed by comparing the output with the reference or by \
                 analysing the output alone:\n{metrics}\n## Task\nWeighing the input, the \
                 output, the reference and every metric above, rate the overall quality of \
                 {judged} with one integer from 1 to 10.\n{low}\n{high}\nReply with the \
                 integer only.\n\n## Score",
                self.input, self.output, self.reference
            )),
        ]
    }

    /// Upstream's prompt of the dataset, its metrics written as upstream writes them.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.merged_judge(
            self.rubric.upstream(),
            &self.input,
            &self.output,
            &self.reference,
            &self.upstream_fields,
        ))
    }

    /// Upstream's judge client: temperature 0 and 1 024 tokens set, top-p its default 0.1.
    fn sampling(&self) -> Sampling {
        Sampling::new(0.0, 0.1, 1024)
    }

    fn parse(&self, text: &str) -> Option<u8> {
        first_score_1_to_10(text)
    }

    /// The merged judge is asked up to three times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 3 }
    }

    fn fallback(&self) -> u8 {
        0
    }

    fn offline(&self, _lang: Lang) -> u8 {
        self.fallback()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(rubric: MergedRubric) -> OverallJudge {
        OverallJudge {
            rubric,
            input: "the input".into(),
            output: "the cat sat on the mat".into(),
            reference: "the cat lay on the mat".into(),
            metrics: rubric.metrics("the cat sat on the mat", "the cat lay on the mat"),
            upstream_fields: rubric
                .upstream_fields("the cat sat on the mat", "the cat lay on the mat"),
        }
    }

    #[test]
    fn each_dataset_is_judged_under_its_own_rubric_with_its_metrics() {
        let prompt = |rubric| judge(rubric).messages(Lang::En)[1].content.clone();
        let legal = prompt(MergedRubric::Judge);
        assert!(legal.contains("expert in law") && legal.contains("## Reference judgment"));
        for metric in [
            "time_score",
            "penalcode_index_precision",
            "judge_bert_score",
        ] {
            assert!(
                legal.contains(&format!("- {metric}: not computed")),
                "{metric}"
            );
        }
        let article = prompt(MergedRubric::JreL);
        assert!(article.contains("science communication"));
        // ROUGE-L is computed: 5 of 6 words in the longest common subsequence.
        assert!(article.contains("- Rouge-L: 0.8333 ("), "{article}");
        let cli = coleman_liau("the cat sat on the mat");
        assert!(article.contains(&format!("- CLI: {cli:.4} (")), "{article}");
        // FKGL and DCRS need the word lists of `scripts/setup.sh`: shown when found, else
        // marked missing with the reason.
        match readability("the cat sat on the mat") {
            Ok(r) => assert!(
                article.contains(&format!("- DCRS: {:.4} (", r.dcrs)),
                "{article}"
            ),
            Err(why) => assert!(article.contains(&format!("- DCRS: not computed, {why}"))),
        }
        let idea = prompt(MergedRubric::IdeaBench);
        assert!(idea.contains("expert researcher"));
        for text in [legal, article, idea] {
            assert!(text.ends_with("Reply with the integer only.\n\n## Score"));
        }
        let op = judge(MergedRubric::Judge);
        assert_eq!(
            op.messages(Lang::En)[0].content,
            "You are a helpful assistant."
        );
        assert_eq!(op.parse("Score: 7/10"), Some(7));
        assert_eq!(op.patience(), Patience::Resend { attempts: 3 });
        assert_eq!(MergedRubric::of("JRE_L"), Some(MergedRubric::JreL));
        assert_eq!(MergedRubric::of("NFCats"), None);
    }
}
