//! A corpus dataset's memory in off-policy runs: a copy of the trained memory with the
//! dataset's conversation added, answered, then dropped, as upstream answers each corpus
//! dataset on a copy of its memory cache. The trained memory is never written to, so it is
//! exactly the same before and after (MemoryOS keeps its queued training exchanges, Mem0 the
//! training memories a corpus fact would update).
//!
//! Costs: the corpus ingestion into the copy is the dataset's corpus cost, as before; making
//! the copy is the harness's bookkeeping (upstream's directory copy is not timed either), so it
//! is logged and charged to no case.

use std::time::Instant;

use mb_baselines::{MemorySystem, SystemSpec};
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;

use crate::cost::Cost;
use crate::progress::ModelProgress;
use crate::run::Setup;
use crate::runtime::HarnessError;

/// A copy of a trained memory holding a corpus; dropped by [`CorpusCopy::discard`].
pub struct CorpusCopy<'a> {
    setup: &'a Setup,
    namespace: String,
    system: Box<dyn MemorySystem>,
}

/// The namespace of the corpus copy of the memory in `trained`.
pub fn copy_namespace(trained: &str) -> String {
    format!("{trained}#corpus-copy")
}

impl<'a> CorpusCopy<'a> {
    /// Copies the memory in `trained` (replacing a copy a stopped run left behind) and
    /// memorizes `conversation` into the copy; returns the copy and the ingestion's cost.
    pub async fn open(
        setup: &'a Setup,
        spec: &'static SystemSpec,
        trained: &str,
        conversation: &Conversation,
        format: CorpusFormat,
    ) -> Result<(CorpusCopy<'a>, Cost), HarnessError> {
        let engine = setup.engine();
        let namespace = copy_namespace(trained);
        if engine.namespace(&namespace).is_ok() {
            engine.drop_namespace(&namespace)?;
        }
        // A system that keeps nothing from training (Vanilla) has no namespace: its copy
        // starts empty, as a copy of nothing.
        if engine.namespace(trained).is_ok() {
            let started = Instant::now();
            engine.copy_namespace(trained, &namespace)?;
            tracing::info!(
                "copied {trained:?} ({} records) in {:.3} s",
                engine.count(&namespace)?,
                started.elapsed().as_secs_f64()
            );
        }
        let system = setup.system(spec, &namespace)?;
        let label = format!("{} memorizing the corpus", spec.name);
        let bar = ModelProgress::new(1, &label, "conversations", &setup.services.llm);
        let work = system.memorize_corpus(conversation, format);
        let (outcome, cost) = Cost::measure(system.as_ref(), work).await?;
        outcome?;
        bar.inc();
        let copy = CorpusCopy {
            setup,
            namespace,
            system,
        };
        Ok((copy, cost))
    }

    /// The memory system working on the copy.
    pub fn system(&self) -> &dyn MemorySystem {
        self.system.as_ref()
    }

    /// Drops the copy.
    pub fn discard(self) -> Result<(), HarnessError> {
        let CorpusCopy {
            setup,
            namespace,
            system,
        } = self;
        // The system lets go of the namespace before it goes.
        drop(system);
        let engine = setup.engine();
        if engine.namespace(&namespace).is_ok() {
            engine.drop_namespace(&namespace)?;
        }
        Ok(())
    }
}
