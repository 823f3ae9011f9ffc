//! A memory that grows in batches (`stepwise-off-policy`, `on-policy`), checkpointed so that
//! `--resume` continues a run where it stopped.
//!
//! The run's memory lives in an engine namespace of its own, named after the run directory, and
//! starts with every corpus of the set. `progress.json` in the run directory records what the
//! memory holds: the corpora, then the batches memorized so far with what each cost. A batch is
//! marked as under way before its first dialog and as memorized after its last, so a run
//! stopped part-way through a batch (Ctrl-C, kill -9, an LLM outage) is recognized on resume:
//! its memory is emptied and rebuilt from the corpora and the recorded batches, in order (with
//! the record cache, from the same model answers), and the costs measured the first time stand.
//!
//! A memory whose retrieval changes it (MemoryOS) also owes its state to the questions it was
//! asked: for it, collecting on-policy dialogs is marked like memorizing, and a rebuilt memory
//! asks the questions of the steps already done again, in order, discarding the answers.

use mb_baselines::{MemorySystem, SystemSpec, TrainingDialog};
use mb_eval::RunFiles;
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;
use crate::run::cost::{CaseTiming, Cost, MemoryBuilt};
use crate::run::progress::ModelProgress;
use crate::run::setup::test_cases;
use crate::run::training::memorize;
use crate::run::{RunArgs, RunSetup};

/// A run's memory and how far it has grown.
pub struct GrowingMemory {
    spec: &'static SystemSpec,
    system: Box<dyn MemorySystem>,
    k: usize,
    files: RunFiles,
    progress: Progress,
    /// Batches the engine holds now: behind `progress.batches` while a memory is rebuilt.
    held: usize,
    /// The memory was rebuilt when the run resumed.
    rebuilt: bool,
    cases: f64,
}

/// What `progress.json` records.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Progress {
    /// The corpora's ingestion, once done.
    corpora: Option<Cost>,
    /// The batches memorized, in order.
    batches: Vec<MemoryBuilt>,
    /// Memory-changing work was under way that a resume cannot continue: a batch being
    /// memorized, or questions changing a memory being asked outside a step's partial log.
    #[serde(alias = "memorising")]
    memorizing: bool,
}

const PROGRESS: &str = "progress.json";

impl GrowingMemory {
    /// The memory of the run in `files` for `spec`, in the state `progress.json` records, or
    /// new (holding the set's corpora) when the run is new or its memory cannot be trusted.
    pub async fn open(
        setup: &RunSetup,
        run: &RunArgs,
        spec: &'static SystemSpec,
        regime: &str,
        files: &RunFiles,
    ) -> Result<GrowingMemory, HarnessError> {
        let stamp = files
            .dir()
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let namespace = format!(
            "{regime}/{}/{}/{}/{stamp}",
            run.dataset_type, run.set_name, spec.name
        );
        let progress: Progress = if files.path(PROGRESS).is_file() {
            files.read(PROGRESS)?
        } else {
            Progress::default()
        };
        let engine = setup.engine();
        let exists = engine.namespace(&namespace).is_ok();
        let intact = exists && progress.corpora.is_some() && !progress.memorizing;
        if exists && !intact {
            if !progress.batches.is_empty() || progress.memorizing {
                tracing::warn!(
                    "{}: the run stopped while memorizing; rebuilding its memory",
                    files.dir().display()
                );
            }
            engine.drop_namespace(&namespace)?;
        }
        let system = setup.system(spec, &namespace)?;
        let k = setup.retrieve_k(spec)?;
        let held = if intact { progress.batches.len() } else { 0 };
        let rebuilt = !intact && progress.corpora.is_some();
        let mut memory = GrowingMemory {
            spec,
            system,
            k,
            files: RunFiles::new(files.dir()),
            progress,
            held,
            rebuilt,
            cases: test_cases(setup),
        };
        if !intact {
            let system = memory.system.as_ref();
            let mut ingested = Cost::default();
            for dataset in &setup.datasets {
                if let (Some(conversation), Some(format)) =
                    (&dataset.corpus, dataset.corpus_format())
                {
                    let label = format!("memorizing {}'s corpus", dataset.name());
                    let llm = &system.context().llm;
                    let bar = ModelProgress::new(1, &label, "conversations", llm);
                    let work = system.memorize_corpus(conversation, format);
                    let (outcome, cost) = Cost::measure(system, work).await?;
                    outcome?;
                    bar.inc();
                    ingested.add(&cost);
                }
            }
            memory.progress.corpora.get_or_insert(ingested);
            memory.progress.memorizing = false;
            memory.save()?;
        }
        Ok(memory)
    }

    /// The system's registry entry.
    pub fn spec(&self) -> &'static SystemSpec {
        self.spec
    }

    /// The memory system.
    pub fn system(&self) -> &dyn MemorySystem {
        self.system.as_ref()
    }

    /// Memories retrieved per question.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The corpora's ingestion, as a share of each test case.
    pub fn corpus_share(&self) -> CaseTiming {
        self.progress
            .corpora
            .clone()
            .unwrap_or_default()
            .corpus_share(self.cases)
    }

    /// Makes batch `index` part of the memory, memorizing `dialogs` unless the memory holds
    /// them already. Batches come in order, from 0, every time a run (re)starts.
    pub async fn include(
        &mut self,
        index: usize,
        label: &str,
        dialogs: &[TrainingDialog<'_>],
    ) -> Result<MemoryBuilt, HarnessError> {
        if index < self.held {
            return self.recorded(index);
        }
        if index != self.held {
            return Err(HarnessError::Usage(format!(
                "{}: batch {index} asked for while the memory holds {}",
                self.files.dir().display(),
                self.held
            )));
        }
        self.progress.memorizing = true;
        self.save()?;
        let built = memorize(self.system.as_ref(), label, dialogs).await?;
        self.held += 1;
        if index == self.progress.batches.len() {
            self.progress.batches.push(built);
        }
        self.progress.memorizing = false;
        self.save()?;
        self.recorded(index)
    }

    /// Whether questions asked before the run stopped must be asked again: the memory was
    /// rebuilt, and asking changes it.
    pub fn replays_questions(&self) -> bool {
        self.rebuilt && self.system.retrieval_changes_memory()
    }

    /// Marks questions about to change the memory outside a partial log (on-policy
    /// collection) until the next batch is memorized, so that a stop in between rebuilds the
    /// memory. Nothing to mark for a memory that questions do not change.
    pub fn unsettle(&mut self) -> Result<(), HarnessError> {
        if !self.system.retrieval_changes_memory() {
            return Ok(());
        }
        self.progress.memorizing = true;
        self.save()
    }

    /// A memorized batch's share of each test case.
    pub fn batch_share(&self, built: &MemoryBuilt) -> CaseTiming {
        built.total.dialogs_share(self.cases)
    }

    fn recorded(&self, index: usize) -> Result<MemoryBuilt, HarnessError> {
        self.progress.batches.get(index).cloned().ok_or_else(|| {
            HarnessError::Usage(format!(
                "{}: batch {index} is not recorded",
                self.files.path(PROGRESS).display()
            ))
        })
    }

    fn save(&self) -> Result<(), HarnessError> {
        Ok(self.files.write(PROGRESS, &self.progress)?)
    }
}
