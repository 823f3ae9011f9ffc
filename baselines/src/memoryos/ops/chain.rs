//! MemoryOS's page chain: whether an exchange continues the previous one, and the chain's
//! running summary.

use mb_core::Lang;
use mb_upstream::{Upstream, UpstreamError};

use super::Exchange;
use crate::prompt::language_line;
use mb_llm::ops::text::{jaccard, lead, term_set};
use mb_llm::ops::Operation;
use mb_llm::{Message, Sampling};

/// Whether an exchange continues the topic of the previous one (the model answers
/// `true`/`false`; anything else counts as `false`, as upstream).
///
/// Offline: true when the two exchanges share at least 15 % of their content terms.
#[derive(Debug, Clone)]
pub struct IsContinuous {
    previous: Exchange,
    current: Exchange,
}

impl IsContinuous {
    /// Continuity of `current` after `previous`.
    pub fn new(previous: Exchange, current: Exchange) -> IsContinuous {
        IsContinuous { previous, current }
    }
}

impl Operation for IsContinuous {
    type Output = bool;

    fn name(&self) -> &'static str {
        "is_continuous"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![Message::user(format!(
            "Do these two consecutive exchanges belong to one continuing conversation thread \
             (the second follows up on the first's topic), rather than starting something new?\n\n\
             First:\n{}\n\nSecond:\n{}\n\nAnswer with the single word true or false.",
            self.previous.render(),
            self.current.render()
        ))]
    }

    /// Upstream's system message and prompt.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.memoryos_continuity(self.previous.sides(), self.current.sides()))
    }

    /// Upstream's client at temperature 0, without top-p.
    fn sampling(&self) -> Sampling {
        Sampling::without_top_p(0.0, 2048)
    }

    fn parse(&self, text: &str) -> Option<bool> {
        Some(
            text.trim()
                .trim_end_matches('.')
                .eq_ignore_ascii_case("true"),
        )
    }

    /// MemoryOS's reading: the whole reply, lower-cased, is `true` (so `True.` is false).
    fn parse_as_upstream(&self, text: &str) -> Option<bool> {
        Some(text.trim().to_lowercase() == "true")
    }

    fn fallback(&self) -> bool {
        false
    }

    fn offline(&self, lang: Lang) -> bool {
        let a = term_set(&self.previous.render(), lang);
        let b = term_set(&self.current.render(), lang);
        jaccard(&a, &b) >= 0.15
    }
}

/// A running one-or-two-sentence summary of a conversation chain, updated with a new exchange
/// (or started from it).
///
/// Offline: the previous summary's first sentence followed by the exchange's first user
/// sentence. Fallback on an empty reply: the previous summary.
#[derive(Debug, Clone)]
pub struct MetaSummary {
    previous: Option<String>,
    exchange: Exchange,
}

impl MetaSummary {
    /// The chain summary after `exchange`, given the summary so far (`None` at the start).
    pub fn new(previous: Option<String>, exchange: Exchange) -> MetaSummary {
        MetaSummary { previous, exchange }
    }
}

impl Operation for MetaSummary {
    type Output = String;

    fn name(&self) -> &'static str {
        "meta_summary"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let so_far = match &self.previous {
            Some(summary) => format!("Summary so far:\n{summary}\n\n"),
            None => "This exchange begins the conversation.\n\n".to_string(),
        };
        vec![Message::user(format!(
            "{so_far}New exchange:\n{}\n\nWrite an updated summary of the whole conversation \
             thread in one or two sentences: who is involved, what is being discussed, and \
             what has been established. {} Reply with the summary only.",
            self.exchange.render(),
            language_line(lang)
        ))]
    }

    /// Upstream's system message and prompt.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.memoryos_meta_summary(
            self.previous.as_deref(),
            &self.exchange.user,
            &self.exchange.assistant,
        ))
    }

    /// Upstream's client at temperature 0.3, without top-p.
    fn sampling(&self) -> Sampling {
        Sampling::without_top_p(0.3, 2048)
    }

    fn parse(&self, text: &str) -> Option<String> {
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    fn fallback(&self) -> String {
        self.previous.clone().unwrap_or_default()
    }

    fn offline(&self, _lang: Lang) -> String {
        let start = self.previous.as_deref().map(|p| lead(p, 1));
        let new = lead(&self.exchange.user, 1);
        match start {
            Some(start) if !start.is_empty() && start != new => {
                // An unterminated first sentence stays a line of its own, so the next summary's
                // first sentence is still this one: a chain's summary stays two sentences long.
                let ended = start.ends_with(['.', '!', '?', '。', '！', '？']);
                format!("{start}{}{new}", if ended { " " } else { "\n" })
            }
            _ => new,
        }
    }
}
