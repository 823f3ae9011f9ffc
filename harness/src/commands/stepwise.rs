//! `stepwise-off-policy`: how a memory improves as training dialogs arrive in batches.
//!
//! As upstream: one fresh memory receives the corpus of every corpus dataset of the set, the
//! test sets are answered (`begin/`), and then the shuffled training dialogs are added
//! `--batch-size` at a time, the test sets answered after each batch (`[from,to)/`, with that
//! batch's `training_dialogs.json`). Each subdirectory gets upstream's `test_predicts.json`,
//! `evaluate_details.json` and `summary.json`, plus our `timing.json` and, for a batch, its
//! dialogs' `memorization.json`. `--resume` continues an interrupted run (see
//! [`crate::run::growing_memory`]).

use clap::Args;
use mb_baselines::SystemSpec;
use mb_eval::RunFiles;
use serde_json::json;

use crate::error::HarnessError;
use crate::run::cases::{answer_test_sets, Outcome};
use crate::run::dir::run_dir;
use crate::run::growing_memory::GrowingMemory;
use crate::run::regime::{run_regime, Regime};
use crate::run::training::MEMORIZATION;
use crate::run::training::{as_training, training_dialogs};
use crate::run::{RunArgs, RunSetup};

/// Arguments of `stepwise-off-policy`.
#[derive(Args, Debug)]
pub struct StepwiseArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Training dialogs added between two evaluations.
    #[arg(long, default_value_t = 100)]
    batch_size: usize,
}

/// Runs `stepwise-off-policy`.
pub fn run(args: &StepwiseArgs) -> Result<(), HarnessError> {
    run_regime(args)
}

impl Regime for StepwiseArgs {
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
            "step_off-policy/results",
            spec,
            json!({"batch_size": args.batch_size}),
        )?;
        // A memory of its own, empty but for the corpora at the start (upstream never reuses it).
        let mut memory = GrowingMemory::open(setup, run, spec, "step_off-policy", &files).await?;
        let begin = RunFiles::new(files.dir().join("begin"));
        let mut outcomes = vec![
            answer_test_sets(setup, run, &memory, &begin, memory.corpus_share(), "begin").await?,
        ];
        let dialogs = training_dialogs(spec, &setup.datasets);
        let size = args.batch_size.max(1);
        for (index, from) in (0..dialogs.len()).step_by(size).enumerate() {
            let to = (from + size).min(dialogs.len());
            let tag = format!("[{from},{to})");
            let batch = &dialogs[from..to];
            let step = RunFiles::new(files.dir().join(&tag));
            let trained: Vec<_> = batch
                .iter()
                .map(
                    |(row, _, dialog)| json!({"test_idx": row.test_idx, "dialog": dialog.messages}),
                )
                .collect();
            step.write("training_dialogs.json", &trained)?;
            let batch: Vec<_> = batch.iter().map(as_training).collect();
            let label = format!("{} dialogs {tag}", spec.name);
            let built = memory.include(index, &label, &batch).await?;
            step.write(MEMORIZATION, &built.per_dialog)?;
            let base = memory.batch_share(&built);
            outcomes.push(answer_test_sets(setup, run, &memory, &step, base, &tag).await?);
        }
        Ok(outcomes)
    }
}
