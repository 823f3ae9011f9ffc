//! A dataset's memory in off-policy runs when answering it must not touch the trained memory: a
//! copy of the trained memory, answered, then dropped. A corpus dataset (LoCoMo, DialSim) gets a
//! copy with its conversation added, as upstream answers each corpus dataset on a copy of its
//! memory cache; a memory that questions change (MemoryOS: visits warm its sessions) is answered
//! on a copy for every dataset, so the cached memory stays exactly as built and a second run
//! meets the memory the first one did. The trained memory is never written to (MemoryOS keeps
//! its queued training exchanges and its session heat, Mem0 the training memories a corpus fact
//! would update).
//!
//! Costs: the corpus ingestion into the copy is the dataset's corpus cost; making the copy is
//! the harness's bookkeeping (upstream's directory copy is not timed either), so it is logged and
//! charged to no case.

use std::time::Instant;

use mb_baselines::{MemorySystem, SystemSpec};
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;

use crate::error::HarnessError;
use crate::run::cost::Cost;
use crate::run::progress::ModelProgress;
use crate::run::RunSetup;
use crate::store::drop_namespace_if_present;

/// The suffix of a copy's namespace before copies were also made for questions; a copy a
/// stopped run of an older version left behind under it is dropped too.
const LEGACY_SUFFIX: &str = "#corpus-copy";

/// A copy of a trained memory that one dataset is answered on; dropped by
/// [`MemoryCopy::discard`].
pub struct MemoryCopy<'a> {
    setup: &'a RunSetup,
    spec: &'static SystemSpec,
    namespace: String,
    system: Box<dyn MemorySystem>,
}

/// The namespace of the copy of the memory in `trained`.
pub fn copy_namespace(trained: &str) -> String {
    format!("{trained}#copy")
}

impl<'a> MemoryCopy<'a> {
    /// Copies the memory in `trained`, replacing a copy a stopped run left behind.
    pub fn open(
        setup: &'a RunSetup,
        spec: &'static SystemSpec,
        trained: &str,
    ) -> Result<MemoryCopy<'a>, HarnessError> {
        let engine = setup.engine();
        let namespace = copy_namespace(trained);
        drop_namespace_if_present(engine, &namespace)?;
        drop_namespace_if_present(engine, &format!("{trained}{LEGACY_SUFFIX}"))?;
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
        Ok(MemoryCopy {
            setup,
            spec,
            namespace,
            system,
        })
    }

    /// Memorizes `conversation` into the copy; returns the ingestion's cost.
    pub async fn memorize_corpus(
        &self,
        conversation: &Conversation,
        format: CorpusFormat,
    ) -> Result<Cost, HarnessError> {
        let system = self.system.as_ref();
        let label = format!("{} memorizing the corpus", self.spec.name);
        let bar = ModelProgress::new(1, &label, "conversations", &self.setup.services.llm);
        let work = system.memorize_corpus(conversation, format);
        let (outcome, cost) = Cost::measure(system, work).await?;
        outcome?;
        bar.inc();
        Ok(cost)
    }

    /// The memory system working on the copy.
    pub fn system(&self) -> &dyn MemorySystem {
        self.system.as_ref()
    }

    /// Drops the copy.
    pub fn discard(self) -> Result<(), HarnessError> {
        let MemoryCopy {
            setup,
            namespace,
            system,
            ..
        } = self;
        // The system lets go of the namespace before it goes.
        drop(system);
        drop_namespace_if_present(setup.engine(), &namespace)
    }
}
