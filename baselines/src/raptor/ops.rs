//! RAPTOR's one model operation: the summary of a cluster of nodes, which becomes their parent
//! in the next layer (vendored `TYCSummarizationModel.summarize`, up to 100 tokens).

use mb_core::Lang;
use mb_llm::ops::text::sentences;
use mb_llm::ops::Operation;
use mb_llm::{Message, Sampling};
use mb_upstream::{Prompt, Upstream, UpstreamError};

/// Most tokens of a summary (upstream's `tb_summarization_length`).
pub const SUMMARY_TOKENS: u32 = 100;
/// Words the offline summary keeps, about [`SUMMARY_TOKENS`] tokens.
const OFFLINE_WORDS: usize = 70;

/// The summary of a cluster's text (its nodes' texts, each on one line, blank lines between).
///
/// Offline: the text's first sentences, up to about 70 words, so a parent holds words of its
/// children and a search can find it. Fallback on unusable output: no text.
#[derive(Debug, Clone)]
pub struct SummarizeCluster {
    context: String,
}

impl SummarizeCluster {
    /// The summary of `context`.
    pub fn new(context: impl Into<String>) -> SummarizeCluster {
        SummarizeCluster {
            context: context.into(),
        }
    }
}

impl Operation for SummarizeCluster {
    type Output = String;

    fn name(&self) -> &'static str {
        "summarize_cluster"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let request = match lang {
            Lang::En => format!(
                "Summarize the text below, keeping as many of its key details as you can: {}",
                self.context
            ),
            Lang::Zh => format!(
                "请概括下面的文字，尽可能保留其中的关键细节：{}",
                self.context
            ),
        };
        vec![
            Message::system("You are an assistant that writes summaries."),
            Message::user(request),
        ]
    }

    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some((|| {
            Ok(vec![
                Message::system(upstream.render(Prompt::RaptorSummarizeSystem, &[])?),
                Message::user(upstream.render(
                    Prompt::RaptorSummarize,
                    &[("context", self.context.as_str())],
                )?),
            ])
        })())
    }

    fn sampling(&self) -> Sampling {
        let mut sampling = Sampling::default();
        sampling.max_tokens = SUMMARY_TOKENS;
        sampling
    }

    fn parse(&self, text: &str) -> Option<String> {
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    fn fallback(&self) -> String {
        String::new()
    }

    fn offline(&self, _lang: Lang) -> String {
        let mut words = 0;
        let mut kept = Vec::new();
        for sentence in sentences(&self.context) {
            if words >= OFFLINE_WORDS {
                break;
            }
            words += sentence.split_whitespace().count();
            kept.push(sentence);
        }
        kept.join(" ")
    }
}
