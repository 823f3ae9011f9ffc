//! `off-policy` and `train-performance`: upstream's off-policy regime, timed, and its variant
//! that asks the training questions again.
//!
//! The memory learns from every training dialog of the set (shuffled with Python's
//! `random.seed(42); random.shuffle`), once: the memory lives in the engine store and later
//! runs built from the same inputs reuse it (upstream's memory cache, see
//! [`crate::run::memory_cache`]). Each dataset's test rows (training rows for `train-performance`)
//! are then answered; a corpus dataset (LoCoMo, DialSim) is answered on a copy of the memory
//! that its conversation is added to, dropped afterwards (upstream's per-dataset copies, see
//! [`crate::run::memory_copy`]), so every corpus meets the dialog memory alone and leaves it as it
//! was; so is every dataset for a memory that questions change (MemoryOS), so the cached memory
//! stays as built. Predictions are appended to
//! `predict.partial.jsonl` as they finish, so `--resume` after an interruption continues where
//! the run stopped. Then the predictions are evaluated and summarized, and the time of each case
//! is recorded: memory processing (the set's dialog memorization and the dataset's corpus
//! ingestion, amortised over its cases, as in the paper) against prediction (memory retrieval
//! and the answer model).

use std::collections::BTreeMap;

use mb_baselines::SystemSpec;
use mb_datasets::row::{Action, Dialog};
use mb_datasets::SplitName;
use mb_eval::{read_json, write_json, PREDICT};
use serde_json::json;

use crate::commands::longmemeval::{self, LongMemEvalArgs};
use crate::error::HarnessError;
use crate::run::cases::{answer_rows, finish, Outcome, PARTIAL};
use crate::run::cost::Cost;
use crate::run::dir::{run_dir, run_dir_in};
use crate::run::memory_cache::{self, ensure_bookkeeping, MemoryInputs};
use crate::run::memory_copy::MemoryCopy;
use crate::run::partial_log::PartialLog;
use crate::run::regime::{run_regime, Regime};
use crate::run::training::{as_training, memorize, training_dialogs_where, MEMORIZATION};
use crate::run::{RunArgs, RunSetup};
use crate::store::drop_namespace_if_present;

/// Which questions a run asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Questions {
    /// The test rows (`off-policy`).
    Test,
    /// The training rows whose dialogs are in memory (`train-performance`).
    Train,
}

impl Questions {
    fn split(self) -> SplitName {
        match self {
            Questions::Test => SplitName::Test,
            Questions::Train => SplitName::Train,
        }
    }

    /// Upstream's result directory for the regime.
    fn results_dir(self) -> &'static str {
        match self {
            Questions::Test => "off-policy/results",
            Questions::Train => "train_performance/result",
        }
    }
}

/// Which training dialogs the memory learns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Learned<'a> {
    /// Every one (off-policy, train-performance).
    All,
    /// Those whose implicit feedback holds this action in some round (action feedback, see
    /// [`super::action_feedback`]).
    WithAction(Action, &'static str),
    /// None: the answer model learned the action's dialogs instead, as the LoRA adapter the
    /// server applies (the SFT baseline, see [`super::sft`]).
    ByAdapter(&'a AdapterRun),
}

/// The adapter an SFT run answers with, as its run directory records it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct AdapterRun {
    /// The action whose dialogs it learned (upstream's name).
    pub action: &'static str,
    /// The epoch whose checkpoint it is.
    pub epoch: usize,
    /// Its file.
    pub adapter: String,
    /// The training run's configuration (`training_config.json`).
    pub training: serde_json::Value,
}

impl Learned<'_> {
    fn keeps(self, dialog: &Dialog) -> bool {
        match self {
            Learned::All => true,
            Learned::WithAction(action, _) => {
                dialog.feedback.iter().any(|f| f.actions.contains(&action))
            }
            Learned::ByAdapter(_) => false,
        }
    }

    /// The run directory and the memory's namespace.
    fn place(
        self,
        run: &RunArgs,
        wording: &mb_upstream::Wording,
        questions: Questions,
        spec: &SystemSpec,
    ) -> Result<(mb_eval::RunFiles, String), HarnessError> {
        let (kind, set) = (&run.dataset_type, &run.set_name);
        Ok(match self {
            // The memory of the set's dialogs is shared by off-policy and train-performance
            // runs.
            Learned::All => (
                run_dir(run, wording, questions.results_dir(), spec, json!({}))?,
                format!("off-policy/{kind}/{set}/{}", spec.name),
            ),
            // An action's, by the runs of that action (upstream's cache `.../<system>/<action>`).
            Learned::WithAction(_, action) => (
                run_dir_in(
                    run,
                    wording,
                    "action_feedback/results",
                    spec,
                    json!({ "action_feedback": action }),
                    Some(action),
                )?,
                format!("action_feedback/{kind}/{set}/{}/{action}", spec.name),
            ),
            Learned::ByAdapter(adapter) => (
                run_dir_in(
                    run,
                    wording,
                    "action_feedback/results",
                    spec,
                    json!({ "action_feedback": adapter.action, "sft": adapter }),
                    Some(&format!("{}/sft/epoch={}", adapter.action, adapter.epoch)),
                )?,
                format!("action_feedback/{kind}/{set}/{}/sft", spec.name),
            ),
        })
    }
}

const CORPUS_TIMING: &str = "corpus_timing.json";
/// Present when the run built its memory rather than reusing a cached one.
const BUILT_BY_THIS_RUN: &str = "memory_built_by_this_run.json";

/// Arguments of `off-policy`: the regime's, and those that run it on LongMemEval instead.
#[derive(clap::Args, Debug)]
pub struct OffPolicyArgs {
    /// The flags every regime takes.
    #[command(flatten)]
    pub run: RunArgs,
    /// `--longmemeval FILE` and its reading options.
    #[command(flatten)]
    pub longmemeval: LongMemEvalArgs,
}

/// Runs `off-policy`: on the set's test questions, or on a LongMemEval file's.
pub fn run(args: &OffPolicyArgs) -> Result<(), HarnessError> {
    match &args.longmemeval.longmemeval {
        Some(path) => longmemeval::run(&args.run, &args.longmemeval, path),
        None => run_questions(&args.run, Questions::Test),
    }
}

/// Runs `off-policy` (`Questions::Test`) or `train-performance` (`Questions::Train`, see
/// [`super::train_performance`]) on a set.
pub(crate) fn run_questions(args: &RunArgs, questions: Questions) -> Result<(), HarnessError> {
    run_regime(&OffPolicy { args, questions })
}

/// The off-policy regime on a set's test or training questions.
struct OffPolicy<'a> {
    args: &'a RunArgs,
    questions: Questions,
}

impl Regime for OffPolicy<'_> {
    const ACCEPTS_MEMORYLESS: bool = true;

    fn run_args(&self) -> &RunArgs {
        self.args
    }

    async fn run_system(
        &self,
        setup: &RunSetup,
        spec: &'static SystemSpec,
    ) -> Result<Vec<Outcome>, HarnessError> {
        Ok(vec![
            run_system(self.args, self.questions, Learned::All, setup, spec).await?,
        ])
    }
}

/// Runs the regime for one system: its memory learns the `learned` training dialogs, then
/// answers the `questions`.
pub(crate) async fn run_system(
    run: &RunArgs,
    questions: Questions,
    learned: Learned<'_>,
    setup: &RunSetup,
    spec: &'static SystemSpec,
) -> Result<Outcome, HarnessError> {
    let wording = &setup.services.llm.wording;
    let (files, namespace) = learned.place(run, wording, questions, spec)?;
    let engine = setup.engine();
    ensure_bookkeeping(engine)?;
    let dialogs = training_dialogs_where(spec, &setup.datasets, |d| learned.keeps(d));
    let dialogs: Vec<_> = dialogs.iter().map(as_training).collect();
    let mut system = setup.system(spec, &namespace)?;
    let inputs = MemoryInputs::of(system.as_ref(), &run.llm.settings()?, &dialogs)?;
    // Whether this process built the memory (upstream's copies of it then lack what it writes
    // only at exit; see `MemorySystem::lose_state_unsaved_before_exit`).
    let mut built_here = false;
    let built = match memory_cache::reusable(engine, &namespace, &inputs)? {
        Some(built) => built,
        None => {
            built_here = true;
            // A memory built from other inputs, or interrupted: start it again, as upstream
            // does with an incomplete cache.
            memory_cache::forget(engine, &namespace)?;
            drop(system);
            drop_namespace_if_present(engine, &namespace)?;
            system = setup.system(spec, &namespace)?;
            let label = format!("{} memorizing dialogs", spec.name);
            let built = memorize(system.as_ref(), &label, &dialogs).await?;
            memory_cache::mark(engine, &namespace, &inputs, &built)?;
            built
        }
    };
    let k = setup.retrieve_k(spec)?;

    files.write(MEMORIZATION, &built.per_dialog)?;
    // Recorded, so that a resumed run copies the memory as the run it continues did.
    let built_marker = files.path(BUILT_BY_THIS_RUN);
    if built_here {
        write_json(&built_marker, &true)?;
    }
    let built_here = built_here || built_marker.exists();
    let (mut log, mut finished) = PartialLog::open(&files.path(PARTIAL))?;
    let corpus_timing = files.path(CORPUS_TIMING);
    let mut corpus_costs: BTreeMap<String, Cost> = if corpus_timing.exists() {
        read_json(&corpus_timing)?
    } else {
        BTreeMap::new()
    };
    let split = questions.split();
    let cases: usize = setup.datasets.iter().map(|d| d.rows(split).len()).sum();
    for dataset in &setup.datasets {
        let todo = log.todo(dataset, dataset.rows(split));
        if todo.is_empty() {
            continue;
        }
        // A corpus dataset is answered on a copy of the memory holding its conversation; any
        // dataset is when its questions would change the trained memory.
        // (Upstream's action feedback answers a corpus dataset without its conversation.)
        let copy = match (&dataset.corpus, dataset.corpus_format()) {
            (Some(conversation), Some(format)) if learned == Learned::All => {
                let copy = MemoryCopy::open(setup, spec, &namespace)?;
                if built_here {
                    copy.system().lose_state_unsaved_before_exit()?;
                }
                let cost = copy.memorize_corpus(conversation, format).await?;
                // A resumed run ingests the corpus again (its copy went with the stopped
                // process) but reports the ingestion recorded first, as a clean run would.
                if !corpus_costs.contains_key(dataset.name()) {
                    corpus_costs.insert(dataset.name().to_string(), cost);
                    write_json(&corpus_timing, &corpus_costs)?;
                }
                Some(copy)
            }
            _ if system.retrieval_changes_memory() => {
                Some(MemoryCopy::open(setup, spec, &namespace)?)
            }
            _ => None,
        };
        let memory = copy.as_ref().map_or(system.as_ref(), MemoryCopy::system);
        let cost = corpus_costs
            .get(dataset.name())
            .cloned()
            .unwrap_or_default();
        let dataset_cases = dataset.rows(split).len() as f64;
        let base = built
            .total
            .dialogs_share(cases as f64)
            .plus(cost.corpus_share(dataset_cases));
        let label = format!("{} {}", spec.name, dataset.name());
        let answered = answer_rows(
            memory,
            dataset,
            todo,
            k,
            run.threads,
            &label,
            base,
            |entry| log.append(entry),
        )
        .await?;
        log.sync()?;
        finished.extend(answered);
        if let Some(copy) = copy {
            copy.discard()?;
        }
    }
    finish(setup, &run.set_name, spec, &files, PREDICT, finished).await
}
