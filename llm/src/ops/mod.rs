//! Typed LLM operations and the backends that run them.
//!
//! Memory systems never build prompts inline. Each operation is a type implementing
//! [`Operation`]: it owns its prompt (English and Chinese), the JSON shape it expects, a parser,
//! the fallback upstream uses when the output is unusable, and a deterministic offline answer.
//! A [`Backend`] runs operations either on a model (with a bounded number of re-asks on
//! malformed output, then the fallback, counted) or offline, so every memory system runs on a
//! machine without a model. The offline answers are heuristics, not an LLM's quality: they make
//! every path runnable, testable and timeable.

mod amem;
mod answer;
mod facts;
mod feedback;
mod key_facts;
mod keywords;
mod memoryos;
mod shape;
mod text;

use std::collections::BTreeMap;
use std::sync::Arc;

use mb_core::Lang;
use parking_lot::Mutex;

use crate::error::Result;
use crate::{ChatProvider, ChatRequest, Message, ResponseFormat, Sampling};

pub use amem::{
    AnalyzeNote, Evolution, EvolveNote, NeighbourUpdate, NoteAttributes, NoteView, Strengthen,
};
pub use answer::Answer;
pub use facts::{DecideMemoryUpdates, ExtractFacts, MemoryEvent, MemoryEventKind, StoredMemory};
pub use feedback::{Behaviour, Feedback, ImplicitAction, SimulateFeedback, UserPersona};
pub use key_facts::KeyFacts;
pub use keywords::QueryKeywords;
pub use memoryos::{
    Exchange, ExtractKnowledge, IsContinuous, Knowledge, MetaSummary, MultiTopicSummary, Topic,
    UpdateProfile,
};

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
    "simulate_feedback",
    "judge_match",
    "judge_rubric",
    "judge_checklist",
    "judge_critic",
    "judge_overall",
    "judge_limitation_aspect",
    "judge_limitation_subtype",
    "judge_limitation_rating",
    "judge_longmemeval",
];

/// One LLM-backed step of a memory system, with everything needed to run it on a model or not.
pub trait Operation {
    /// What the operation produces.
    type Output;

    /// Name used in accounting, logs, replay errors and output limits (listed in
    /// [`OPERATION_NAMES`]).
    fn name(&self) -> &'static str;

    /// The prompt.
    fn messages(&self, lang: Lang) -> Vec<Message>;

    /// Sampling parameters (upstream's defaults unless the operation has its own).
    fn sampling(&self) -> Sampling {
        Sampling::default()
    }

    /// Structured-output constraint passed to servers that support one.
    fn response_format(&self) -> Option<ResponseFormat> {
        None
    }

    /// Reads the model's answer; `None` when it is unusable.
    fn parse(&self, text: &str) -> Option<Self::Output>;

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
    fallbacks: Mutex<BTreeMap<&'static str, u64>>,
}

enum BackendKind {
    Model {
        provider: Arc<dyn ChatProvider>,
        reasks: u32,
    },
    Offline,
}

impl Backend {
    /// Operations answered by `provider`, re-asking up to `reasks` times on unusable output.
    pub fn model(provider: Arc<dyn ChatProvider>, reasks: u32) -> Backend {
        Backend {
            kind: BackendKind::Model { provider, reasks },
            fallbacks: Mutex::default(),
        }
    }

    /// Operations answered by their deterministic offline implementations.
    pub fn offline() -> Backend {
        Backend {
            kind: BackendKind::Offline,
            fallbacks: Mutex::default(),
        }
    }

    /// Whether operations run without a model.
    pub fn is_offline(&self) -> bool {
        matches!(self.kind, BackendKind::Offline)
    }

    /// How often each operation fell back after unusable output.
    pub fn fallbacks(&self) -> BTreeMap<&'static str, u64> {
        self.fallbacks.lock().clone()
    }

    /// The fallbacks so far, and a fresh count (per-run accounting).
    pub fn take_fallbacks(&self) -> BTreeMap<&'static str, u64> {
        std::mem::take(&mut *self.fallbacks.lock())
    }

    /// Runs `operation` with its prompt in `lang`. Errors are the provider's (unreachable
    /// server, context overflow); unusable output never is one: it ends in the operation's
    /// fallback.
    pub async fn run<O: Operation + Sync>(&self, operation: &O, lang: Lang) -> Result<O::Output> {
        let (provider, reasks) = match &self.kind {
            BackendKind::Offline => {
                crate::ledger::charge_offline_operation();
                return Ok(operation.offline(lang));
            }
            BackendKind::Model { provider, reasks } => (provider, *reasks),
        };
        let mut request =
            ChatRequest::new(operation.messages(lang)).with_operation(operation.name());
        request.sampling = operation.sampling();
        request.response_format = operation.response_format();
        for attempt in 0..=reasks {
            let completion = provider.complete(&request).await?;
            if let Some(output) = operation.parse(&completion.text) {
                return Ok(output);
            }
            tracing::debug!(
                operation = operation.name(),
                attempt,
                "unusable output; re-asking"
            );
            request.messages.push(Message::assistant(completion.text));
            request.messages.push(operation.reask(lang));
        }
        // Counted, not warned: runs show fallbacks in their progress, table and summary (a
        // warning per fallback would break the progress bars of a chatty small model).
        tracing::debug!(
            operation = operation.name(),
            "unusable output after re-asks; using the fallback"
        );
        *self.fallbacks.lock().entry(operation.name()).or_default() += 1;
        crate::ledger::charge_fallback(operation.name());
        Ok(operation.fallback())
    }
}
