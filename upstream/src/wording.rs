//! Which words a run's prompts are in: upstream's, read from a checkout, or the project's own
//! paraphrase (the default when no checkout is named).

use std::sync::Arc;

use crate::Upstream;

/// The wording of a run's prompts.
#[derive(Debug, Clone, Default)]
pub enum Wording {
    /// The project's own paraphrase of every prompt: runnable anywhere, not comparable with
    /// the paper.
    #[default]
    Paraphrased,
    /// Upstream's own text, read from a checkout.
    Upstream(Arc<Upstream>),
}

/// What results say when their prompts were the paraphrase.
pub const PARAPHRASED: &str = "paraphrased (not comparable with the paper)";

impl Wording {
    /// Upstream's checkout, when the wording is upstream's.
    pub fn upstream(&self) -> Option<&Upstream> {
        match self {
            Wording::Paraphrased => None,
            Wording::Upstream(upstream) => Some(upstream),
        }
    }

    /// What a run records as its prompts' source.
    pub fn provenance(&self) -> String {
        match self {
            Wording::Paraphrased => PARAPHRASED.to_string(),
            Wording::Upstream(upstream) => upstream.provenance(),
        }
    }
}
