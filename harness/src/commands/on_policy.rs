//! `on-policy`: the memory learns from dialogs it takes part in.
//!
//! As upstream: one fresh memory receives every corpus of the set; then for each of `--step`
//! steps, `--batch-size` training rows are drawn (Python's `random.seed(42)` once, then
//! `random.sample` per step, so rows may recur across steps); the system answers each with its
//! memory, as it answers a test case, the simulated user reacts (rule-based on LoCoMo/DialSim,
//! the simulator role elsewhere), the dialogs — holding the question as asked, not the prompt
//! with memories — are written to `step_<i>/train_dialogs.json` and memorized, and the
//! test sets are answered and evaluated in `step_<i>/`. `--resume` continues an interrupted run
//! (see [`crate::run::growing_memory`]): the draws are made again, and a step's dialogs, once written, are
//! read back rather than collected again.
//!
//! Upstream's follow-up loop never appends the assistant's follow-up (a missing `break`), so
//! its dialogs end with the answer or with the user's first feedback, after three calls whose
//! answers it discards; `--feedback-answers` chooses that (`discarded`, the default), the same
//! dialogs without those calls (`skipped`), or the dialogs upstream meant to (`answered`, up
//! to `--max-rounds` answers; `--answer-feedback` for short).

use clap::Args;
use futures::stream::{self, StreamExt, TryStreamExt};
use mb_baselines::{MemorySystem, SystemSpec, TrainingDialog};
use mb_core::Message;
use mb_datasets::row::{Feedback, Row};
use mb_datasets::{Dataset, PyRandom};
use mb_eval::RunFiles;
use mb_eval::{evaluator_for, Evaluator};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::HarnessError;
use crate::run::cases::{answer_test_sets, Outcome};
use crate::run::converse::{converse, FeedbackAnswers, Opening, Rounds};
use crate::run::dir::run_dir;
use crate::run::fewer_memories::answer_case;
use crate::run::growing_memory::GrowingMemory;
use crate::run::progress::ModelProgress;
use crate::run::regime::{run_regime, Regime};
use crate::run::training::MEMORIZATION;
use crate::run::{RunArgs, RunSetup};

/// Arguments of `on-policy`.
#[derive(Args, Debug)]
pub struct OnPolicyArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Steps of collecting dialogs, memorizing them and evaluating.
    #[arg(long, default_value_t = 10)]
    step: usize,
    /// Training rows drawn per step.
    #[arg(long, default_value_t = 100)]
    batch_size: usize,
    /// Assistant turns per dialog at most (1: no feedback at all; also `--max_rounds`).
    #[arg(long, alias = "max_rounds", default_value_t = 3)]
    max_rounds: usize,
    /// What follows the user's feedback: upstream's three answers thrown away before the
    /// dialog ends (`discarded`), the same dialogs without those calls (`skipped`), or an
    /// answer to each feedback up to --max-rounds turns, as upstream meant to (`answered`).
    #[arg(long, value_enum, default_value_t = FeedbackAnswers::Discarded)]
    feedback_answers: FeedbackAnswers,
    /// Short for `--feedback-answers answered`.
    #[arg(long, conflicts_with = "feedback_answers")]
    answer_feedback: bool,
}

impl OnPolicyArgs {
    /// What follows the user's feedback, `--answer-feedback` included.
    fn feedback_answers(&self) -> FeedbackAnswers {
        if self.answer_feedback {
            FeedbackAnswers::Answered
        } else {
            self.feedback_answers
        }
    }
}

/// Runs `on-policy`.
pub fn run(args: &OnPolicyArgs) -> Result<(), HarnessError> {
    run_regime(args)
}

/// One collected training dialog, as `step_<i>/train_dialogs.json` records it.
#[derive(Debug, Serialize, Deserialize)]
struct Collected {
    test_idx: u64,
    dataset: String,
    /// Its position in the pool of every dataset's training rows (what was drawn).
    training_set_idx: usize,
    dialog: Vec<Message>,
    implicit_feedback: Vec<Value>,
}

const TRAIN_DIALOGS: &str = "train_dialogs.json";

impl Regime for OnPolicyArgs {
    const ACCEPTS_MEMORYLESS: bool = false;

    fn run_args(&self) -> &RunArgs {
        &self.run
    }

    async fn run_system(
        &self,
        setup: &RunSetup,
        spec: &'static SystemSpec,
    ) -> Result<Vec<Outcome>, HarnessError> {
        let args = self;
        let run = &args.run;
        let files = run_dir(
            run,
            &setup.services.llm.wording,
            "on-policy/results",
            spec,
            json!({
                "step": args.step,
                "batch_size": args.batch_size,
                "max_rounds": args.max_rounds,
                "feedback_answers": args.feedback_answers(),
            }),
        )?;
        // On-policy time is the dialogs' memorization per step; the corpora's share is not counted.
        let mut memory = GrowingMemory::open(setup, run, spec, "on-policy", &files).await?;
        let evaluators: Vec<Box<dyn Evaluator>> = setup
            .datasets
            .iter()
            .map(|d| evaluator_for(&d.config))
            .collect::<Result<_, _>>()?;
        let pool: Vec<(usize, &Row)> = setup
            .datasets
            .iter()
            .enumerate()
            .flat_map(|(i, d)| d.train.iter().map(move |row| (i, row)))
            .collect();
        let positions: Vec<usize> = (0..pool.len()).collect();
        let rounds = Rounds {
            max: args.max_rounds,
            first_number: 0,
            feedback_answers: args.feedback_answers(),
        };
        let mut rng = PyRandom::new(42);
        let mut outcomes = Vec::new();
        for step in 0..args.step {
            let drawn = rng
                .sample(&positions, args.batch_size.min(pool.len()))
                .unwrap_or_default();
            let step_files = RunFiles::new(files.dir().join(format!("step_{step}")));
            // A resumed run reads the dialogs a step collected before it stopped.
            let collected: Vec<Collected> = if step_files.path(TRAIN_DIALOGS).is_file() {
                let recorded: Vec<Collected> = step_files.read(TRAIN_DIALOGS)?;
                let recorded_draws: Vec<usize> =
                    recorded.iter().map(|c| c.training_set_idx).collect();
                if recorded_draws != drawn {
                    return Err(HarnessError::Usage(format!(
                        "{}: its dialogs were drawn from other training data than this run's",
                        step_files.path(TRAIN_DIALOGS).display()
                    )));
                }
                if memory.replays_questions() {
                    // A rebuilt memory is asked the step's questions again, as it was before.
                    stream::iter(drawn.iter().map(|&pool_index| {
                        let row = pool[pool_index].1;
                        let system = memory.system();
                        let k = memory.k();
                        async move {
                            let initial = row.input.initial_messages();
                            answer_case(system, &initial, row.lang, k).await.map(|_| ())
                        }
                    }))
                    .buffered(run.threads.max(1))
                    .try_collect::<Vec<()>>()
                    .await?;
                }
                recorded
            } else {
                memory.unsettle()?;
                let label = format!("{} feedback dialogs (step {step})", spec.name);
                let bar =
                    ModelProgress::new(drawn.len() as u64, &label, "dialogs", &setup.services.llm);
                let collected = stream::iter(drawn.into_iter().map(|pool_index| {
                    let (dataset_index, row) = pool[pool_index];
                    let dataset = &setup.datasets[dataset_index];
                    let evaluator = evaluators[dataset_index].as_ref();
                    collect(
                        setup,
                        memory.system(),
                        (dataset, row, evaluator),
                        rounds,
                        memory.k(),
                        pool_index,
                    )
                }))
                .buffered(run.threads.max(1))
                .inspect_ok(|_| bar.inc())
                .try_collect()
                .await?;
                drop(bar);
                step_files.write(TRAIN_DIALOGS, &collected)?;
                collected
            };
            let dialogs: Vec<TrainingDialog> = collected
                .iter()
                .map(|c| {
                    let (dataset_index, row) = pool[c.training_set_idx];
                    TrainingDialog {
                        test_idx: row.test_idx,
                        dataset: setup.datasets[dataset_index].name(),
                        lang: row.lang,
                        messages: &c.dialog,
                        metadata: None,
                    }
                })
                .collect();
            let tag = format!("step {step}");
            let built = memory
                .include(step, &format!("{} dialogs ({tag})", spec.name), &dialogs)
                .await?;
            step_files.write(MEMORIZATION, &built.per_dialog)?;
            let base = memory.batch_share(&built);
            outcomes.push(answer_test_sets(setup, run, &memory, &step_files, base, &tag).await?);
        }
        Ok(outcomes)
    }
}

/// One training dialog: the system answers with its memory, the simulated user reacts. The
/// dialog holds the question as asked, as upstream's does.
async fn collect(
    setup: &RunSetup,
    system: &dyn MemorySystem,
    (dataset, row, evaluator): (&Dataset, &Row, &dyn Evaluator),
    rounds: Rounds,
    k: usize,
    pool_index: usize,
) -> Result<Collected, HarnessError> {
    let opening = Opening::QuestionRecorded(system, k);
    let dialog = converse(setup, dataset, row, evaluator, rounds, opening).await?;
    Ok(Collected {
        test_idx: row.test_idx,
        dataset: dataset.name().to_string(),
        training_set_idx: pool_index,
        dialog: dialog.messages,
        implicit_feedback: dialog.feedback.iter().map(Feedback::to_value).collect(),
    })
}
