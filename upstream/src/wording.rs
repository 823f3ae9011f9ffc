//! Which words a run's prompts are in: upstream's, read from a checkout, or the project's own
//! paraphrase (the default when no checkout is named). With upstream's words, every prompt
//! that has none in the catalog yet is still sent in the paraphrase and noted here, so a run
//! says exactly which of its requests were not upstream's.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::Upstream;

/// The wording of a run's prompts. Clones share what they note.
#[derive(Debug, Clone, Default)]
pub struct Wording {
    upstream: Option<Arc<Upstream>>,
    paraphrased: Arc<Mutex<BTreeSet<&'static str>>>,
}

/// What results say when their prompts were the paraphrase.
pub const PARAPHRASED: &str = "paraphrased (not comparable with the paper)";

impl Wording {
    /// The project's own paraphrase of every prompt: runnable anywhere, not comparable with
    /// the paper.
    pub fn paraphrased() -> Wording {
        Wording::default()
    }

    /// Upstream's own text, read from `upstream`.
    pub fn upstream(upstream: Upstream) -> Wording {
        Wording {
            upstream: Some(Arc::new(upstream)),
            paraphrased: Arc::default(),
        }
    }

    /// Upstream's checkout, when the wording is upstream's.
    pub fn checkout(&self) -> Option<&Upstream> {
        self.upstream.as_deref()
    }

    /// Notes that the prompt `what` (an operation's or a system's name) went out in the
    /// paraphrase although the run has upstream's words, because the catalog has no
    /// upstream text for it. Nothing is noted when every prompt is the paraphrase.
    pub fn note_paraphrased(&self, what: &'static str) {
        if self.upstream.is_some() {
            self.noted().insert(what);
        }
    }

    /// The prompts noted by [`Wording::note_paraphrased`], in order.
    pub fn paraphrased_prompts(&self) -> Vec<&'static str> {
        self.noted().iter().copied().collect()
    }

    /// Where the prompts come from: the paraphrase, or upstream's commit (what a run directory
    /// records at its start, and `--resume` compares).
    pub fn source(&self) -> String {
        self.describe(Vec::new())
    }

    /// What a run records as its prompts' source: the paraphrase, or upstream's commit and
    /// the prompts that went out paraphrased so far.
    pub fn provenance(&self) -> String {
        self.describe(self.paraphrased_prompts())
    }

    /// [`Wording::provenance`], and a fresh note of paraphrased prompts (per-run accounting,
    /// when one set of roles serves several runs).
    pub fn take_provenance(&self) -> String {
        let taken = std::mem::take(&mut *self.noted());
        self.describe(taken.into_iter().collect())
    }

    fn describe(&self, paraphrased: Vec<&'static str>) -> String {
        let Some(upstream) = &self.upstream else {
            return PARAPHRASED.to_string();
        };
        if paraphrased.is_empty() {
            upstream.provenance()
        } else {
            format!(
                "{}; paraphrased (no upstream text yet): {}",
                upstream.provenance(),
                paraphrased.join(", ")
            )
        }
    }

    fn noted(&self) -> MutexGuard<'_, BTreeSet<&'static str>> {
        // A set of names stays whole whatever a panicking holder was doing.
        self.paraphrased
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paraphrase_notes_nothing_and_says_it_is_not_comparable() {
        let wording = Wording::paraphrased();
        wording.note_paraphrased("answer.hybrid");
        assert!(wording.paraphrased_prompts().is_empty());
        assert_eq!(wording.provenance(), PARAPHRASED);
    }
}
