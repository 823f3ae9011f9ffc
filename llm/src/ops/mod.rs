//! Typed LLM operations and the backends that run them.
//!
//! Memory systems never build prompts inline. Each operation is a type implementing
//! [`Operation`]: it owns its prompt (English and Chinese), the JSON shape it expects, a parser,
//! the fallback upstream uses when the output is unusable, and a deterministic offline answer.
//! A [`Backend`] runs operations either on a model (unusable output handled as upstream handles
//! it, or tolerantly: see [`handling`]; then the fallback, counted) or offline, so every memory
//! system runs on a machine without a model. The offline answers are heuristics, not an LLM's quality: they make
//! every path runnable, testable and timeable.

mod answer;
mod feedback;
pub mod handling;
mod language;
pub mod shape;
pub mod text;

use std::collections::BTreeMap;
use std::sync::Arc;

use mb_core::Lang;
use parking_lot::Mutex;

use crate::error::{LlmError, Result};
use crate::{ChatProvider, ChatRequest, Message, ResponseFormat, Sampling};
use mb_upstream::{Upstream, UpstreamError, Wording};

pub use answer::Answer;
pub use feedback::{Behaviour, Feedback, ImplicitAction, SimulateFeedback, UserPersona};
pub use handling::{OutputHandling, Patience};
pub use language::PromptLanguage;

/// The name of every operation of the workspace (these and the LLM judges of `mb-datasets`):
/// what output limits per operation may name.
pub const OPERATION_NAMES: &[&str] = &[
    "answer",
    "query_keywords",
    "extract_facts",
    "decide_memory_updates",
    "key_facts",
    "analyze_note",
    "evolve_note",
    "is_continuous",
    "meta_summary",
    "multi_topic_summary",
    "update_profile",
    "extract_knowledge",
    "summarize_cluster",
    "simulate_feedback",
    "judge_match",
    "judge_rubric",
    "judge_checklist",
    "judge_critic",
    "judge_overall",
    "judge_idea_rating",
    "judge_idea_ranking",
    "judge_limitation_aspect",
    "judge_limitation_subtype",
    "judge_limitation_rating",
    "judge_longmemeval",
    "reading_note",
];

/// One LLM-backed step of a memory system, with everything needed to run it on a model or not.
pub trait Operation {
    /// What the operation produces.
    type Output;

    /// Name used in accounting, logs, replay errors and output limits (listed in
    /// [`OPERATION_NAMES`]).
    fn name(&self) -> &'static str;

    /// The prompt, in the project's own words.
    fn messages(&self, lang: Lang) -> Vec<Message>;

    /// The prompt in upstream's own words, read from `upstream`, when the catalog has them for
    /// this operation (default: it has not; the run then sends [`Operation::messages`] and
    /// notes the paraphrase in its provenance).
    fn upstream_messages(
        &self,
        _upstream: &Upstream,
        _lang: Lang,
    ) -> Option<std::result::Result<Vec<Message>, UpstreamError>> {
        None
    }

    /// The structured-output constraint upstream sends with [`Operation::upstream_messages`],
    /// where it is upstream's own text (a schema with its descriptions) rather than the
    /// project's [`Operation::response_format`] (default: the latter serves both wordings).
    fn upstream_response_format(
        &self,
        _upstream: &Upstream,
    ) -> Option<std::result::Result<ResponseFormat, UpstreamError>> {
        None
    }

    /// Sampling parameters (upstream's defaults unless the operation has its own).
    fn sampling(&self) -> Sampling {
        Sampling::default()
    }

    /// Structured-output constraint passed to servers that support one.
    fn response_format(&self) -> Option<ResponseFormat> {
        None
    }

    /// Reads the model's answer tolerantly (ours); `None` when it is unusable.
    fn parse(&self, text: &str) -> Option<Self::Output>;

    /// Reads the model's answer as upstream does (often strictly); `None` where upstream's
    /// reading fails. The default reads as [`Operation::parse`] does, for operations upstream
    /// reads no more strictly (or does not have).
    fn parse_as_upstream(&self, text: &str) -> Option<Self::Output> {
        self.parse(text)
    }

    /// What upstream does when the reply cannot be read (default: the fallback at once).
    fn patience(&self) -> Patience {
        Patience::FallBack
    }

    /// What to use when every answer was unusable (upstream's behaviour, e.g. no facts).
    fn fallback(&self) -> Self::Output;

    /// A deterministic answer computed without a model.
    fn offline(&self, lang: Lang) -> Self::Output;

    /// The message appended, after the model's unusable answer, to ask again.
    fn reask(&self, lang: Lang) -> Message {
        Message::user(match lang {
            Lang::En => {
                "That reply could not be read. Answer again in exactly the format \
                         requested, with nothing else."
            }
            Lang::Zh => "无法读取上面的回复。请严格按照要求的格式重新回答，不要添加其他内容。",
        })
    }
}

/// Runs operations on a model or offline.
pub struct Backend {
    kind: BackendKind,
    counts: Mutex<Counts>,
    wording: Wording,
    prompt_language: PromptLanguage,
}

/// Per-operation counts of how unusable output was dealt with.
#[derive(Default)]
struct Counts {
    fallbacks: BTreeMap<&'static str, u64>,
    resends: BTreeMap<&'static str, u64>,
    cap_hits: BTreeMap<&'static str, u64>,
}

enum BackendKind {
    Model {
        provider: Arc<dyn ChatProvider>,
        handling: OutputHandling,
        reasks: u32,
    },
    Offline,
}

impl Backend {
    /// Operations answered by `provider`, unusable output handled as `handling` says
    /// (`reasks`: the corrective follow-ups of [`OutputHandling::Tolerant`]).
    pub fn model(
        provider: Arc<dyn ChatProvider>,
        handling: OutputHandling,
        reasks: u32,
    ) -> Backend {
        Backend {
            kind: BackendKind::Model {
                provider,
                handling,
                reasks,
            },
            counts: Mutex::default(),
            wording: Wording::paraphrased(),
            prompt_language: PromptLanguage::Dataset,
        }
    }

    /// Operations answered by their deterministic offline implementations.
    pub fn offline() -> Backend {
        Backend {
            kind: BackendKind::Offline,
            counts: Mutex::default(),
            wording: Wording::paraphrased(),
            prompt_language: PromptLanguage::Dataset,
        }
    }

    /// The same backend, its prompts in `wording`.
    pub fn with_wording(mut self, wording: Wording) -> Backend {
        self.wording = wording;
        self
    }

    /// The same backend, its own (paraphrased) prompts in `language`; the offline
    /// implementations and upstream's words still see the row's language.
    pub fn with_prompt_language(mut self, language: PromptLanguage) -> Backend {
        self.prompt_language = language;
        self
    }

    /// Whose words the backend's prompts are in (and the upstream checkout, when it has one).
    pub fn wording(&self) -> &Wording {
        &self.wording
    }

    /// Whether operations run without a model.
    pub fn is_offline(&self) -> bool {
        matches!(self.kind, BackendKind::Offline)
    }

    /// How often each operation fell back after unusable output.
    pub fn fallbacks(&self) -> BTreeMap<&'static str, u64> {
        self.counts.lock().fallbacks.clone()
    }

    /// The fallbacks so far, and a fresh count (per-run accounting).
    pub fn take_fallbacks(&self) -> BTreeMap<&'static str, u64> {
        std::mem::take(&mut self.counts.lock().fallbacks)
    }

    /// How often each operation sent a request again after unusable output (upstream's
    /// resends, or tolerant re-asks), and a fresh count.
    pub fn take_resends(&self) -> BTreeMap<&'static str, u64> {
        std::mem::take(&mut self.counts.lock().resends)
    }

    /// How often each operation reached [`handling::RESEND_CAP`] sends without a usable reply,
    /// and a fresh count.
    pub fn take_cap_hits(&self) -> BTreeMap<&'static str, u64> {
        std::mem::take(&mut self.counts.lock().cap_hits)
    }

    /// Runs `operation` with its prompt in `lang`. Errors are the provider's (unreachable
    /// server, context overflow); unusable output never is one: it ends in the operation's
    /// fallback.
    pub async fn run<O: Operation + Sync>(&self, operation: &O, lang: Lang) -> Result<O::Output> {
        let (provider, handling, reasks) = match &self.kind {
            BackendKind::Offline => {
                crate::ledger::charge_offline_operation();
                return Ok(operation.offline(lang));
            }
            BackendKind::Model {
                provider,
                handling,
                reasks,
            } => (provider, *handling, *reasks),
        };
        let messages = match self.messages(operation, lang) {
            // Upstream's own code raises before it sends this request, and its caller falls
            // back: so does the run, without a request.
            Err(LlmError::Upstream(UpstreamError::Raises { reason, .. })) => {
                tracing::debug!(operation = operation.name(), %reason, "upstream sends nothing");
                self.fall_back(operation.name(), false);
                return Ok(operation.fallback());
            }
            messages => messages?,
        };
        let mut request = ChatRequest::new(messages).with_operation(operation.name());
        request.sampling = operation.sampling();
        request.response_format = self.response_format(operation)?;
        let patience = operation.patience();
        let attempts = match handling {
            OutputHandling::Upstream => patience.attempts(),
            OutputHandling::Tolerant => patience.attempts().max(reasks.saturating_add(1)),
        };
        for attempt in 0..attempts {
            if attempt > 0 {
                *self
                    .counts
                    .lock()
                    .resends
                    .entry(operation.name())
                    .or_default() += 1;
            }
            let completion = provider.complete(&request).await?;
            let output = match handling {
                OutputHandling::Upstream => operation.parse_as_upstream(&completion.text),
                OutputHandling::Tolerant => operation.parse(&completion.text),
            };
            if let Some(output) = output {
                return Ok(output);
            }
            tracing::debug!(operation = operation.name(), attempt, "unusable output");
            match handling {
                // The same request again; a record cache keys it apart from the first send.
                OutputHandling::Upstream => request.resend = attempt + 1,
                OutputHandling::Tolerant => {
                    request.messages.push(Message::assistant(completion.text));
                    request
                        .messages
                        .push(operation.reask(self.prompt_language.of(lang)));
                }
            }
        }
        // Counted, not warned: runs show fallbacks in their progress, table and summary (a
        // warning per fallback would break the progress bars of a chatty small model).
        tracing::debug!(
            operation = operation.name(),
            "unusable output; using the fallback"
        );
        let cap_hit = patience == Patience::UntilParsed && attempts >= handling::RESEND_CAP;
        self.fall_back(operation.name(), cap_hit);
        Ok(operation.fallback())
    }

    /// Counts a fallback of `operation` (and a hit of the resend cap).
    fn fall_back(&self, operation: &'static str, cap_hit: bool) {
        let mut counts = self.counts.lock();
        *counts.fallbacks.entry(operation).or_default() += 1;
        if cap_hit {
            *counts.cap_hits.entry(operation).or_default() += 1;
        }
        drop(counts);
        crate::ledger::charge_fallback(operation);
    }

    /// `operation`'s structured-output constraint in the run's wording.
    fn response_format<O: Operation>(&self, operation: &O) -> Result<Option<ResponseFormat>> {
        if let Some(upstream) = self.wording.checkout() {
            if let Some(format) = operation.upstream_response_format(upstream) {
                return Ok(Some(format?));
            }
        }
        Ok(operation.response_format())
    }

    /// `operation`'s prompt in the run's wording: upstream's words when the run has them and
    /// the catalog holds them, else the paraphrase (noted when upstream's were asked for).
    fn messages<O: Operation>(&self, operation: &O, lang: Lang) -> Result<Vec<Message>> {
        if let Some(upstream) = self.wording.checkout() {
            match operation.upstream_messages(upstream, lang) {
                Some(messages) => return Ok(messages?),
                None => self.wording.note_paraphrased(operation.name()),
            }
        }
        Ok(operation.messages(self.prompt_language.of(lang)))
    }
}
