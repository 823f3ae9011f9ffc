//! `stepwise-off-policy`: how a memory improves as training dialogs arrive in batches.
//!
//! As upstream: one fresh memory receives the corpus of every corpus dataset of the set, the
//! test sets are answered (`begin/`), and then the shuffled training dialogs are added
//! `--batch-size` at a time, the test sets answered after each batch (`[from,to)/`, with that
//! batch's `training_dialogs.json`). Each subdirectory gets upstream's `test_predicts.json`,
//! `evaluate_details.json` and `summary.json`, plus our `timing.json`.

use std::time::Instant;

use clap::Args;
use mb_baselines::{MemorySystem, SystemSpec};
use mb_datasets::results::RunFiles;
use serde_json::json;

use crate::run::{
    answer_rows, finish, memorize, new_run_dir, print_table, training_dialogs, CaseTiming, Outcome,
    RunArgs, Setup,
};
use crate::runtime::HarnessError;

/// Arguments of `stepwise-off-policy`.
#[derive(Args, Debug)]
pub struct StepwiseArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Training dialogs added between two evaluations.
    #[arg(long, default_value_t = 100)]
    batch_size: usize,
}

const PREDICTIONS: &str = "test_predicts.json";

/// Runs `stepwise-off-policy`.
pub fn run(args: &StepwiseArgs) -> Result<(), HarnessError> {
    let setup = Setup::new(&args.run, false)?;
    let mut rows = Vec::new();
    for &spec in &setup.specs {
        rows.extend(setup.runtime.block_on(run_system(args, &setup, spec))?);
    }
    print_table(&rows);
    Ok(())
}

async fn run_system(
    args: &StepwiseArgs,
    setup: &Setup,
    spec: &'static SystemSpec,
) -> Result<Vec<Outcome>, HarnessError> {
    let run = &args.run;
    let files = new_run_dir(
        run,
        "step_off-policy/results",
        spec,
        json!({"batch_size": args.batch_size}),
    )?;
    // A memory of its own, empty at the start (upstream never reuses it).
    let stamp = files
        .dir()
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let namespace = format!(
        "step_off-policy/{}/{}/{}/{stamp}",
        run.dataset_type, run.set_name, spec.name
    );
    let engine = setup.engine();
    if engine.namespace(&namespace).is_ok() {
        engine.drop_namespace(&namespace)?;
    }
    let system = setup.system(spec, &namespace)?;
    let k = run
        .retrieve_k
        .unwrap_or(system.context().settings.retrieve_k);
    let started = Instant::now();
    for dataset in &setup.datasets {
        if let (Some(conversation), Some(format)) = (&dataset.corpus, dataset.corpus_format()) {
            system.memorize_corpus(conversation, format).await?;
        }
    }
    let cases: usize = setup
        .datasets
        .iter()
        .map(|d| d.test.len())
        .sum::<usize>()
        .max(1);
    let corpus_base = CaseTiming {
        memory_corpus: started.elapsed().as_secs_f64() / cases as f64,
        llm_calls_memory: system.stats()?.llm_operations as f64 / cases as f64,
        ..CaseTiming::default()
    };
    let mut outcomes = vec![
        evaluate_step(
            setup,
            run,
            spec,
            system.as_ref(),
            k,
            &files.dir().join("begin"),
            corpus_base,
        )
        .await?,
    ];
    let dialogs = training_dialogs(spec, &setup.datasets);
    let size = args.batch_size.max(1);
    for from in (0..dialogs.len()).step_by(size) {
        let to = (from + size).min(dialogs.len());
        let batch = &dialogs[from..to];
        let step = RunFiles::new(files.dir().join(format!("[{from},{to})")));
        let trained: Vec<_> = batch
            .iter()
            .map(|(row, _, dialog)| json!({"test_idx": row.test_idx, "dialog": dialog.messages}))
            .collect();
        step.write("training_dialogs.json", &trained)?;
        let built = memorize(
            system.as_ref(),
            &format!("{} dialogs [{from},{to})", spec.name),
            batch,
        )
        .await?;
        let base = CaseTiming {
            memory_dialogs: built.seconds / cases as f64,
            llm_calls_memory: built.llm_operations as f64 / cases as f64,
            ..CaseTiming::default()
        };
        outcomes.push(evaluate_step(setup, run, spec, system.as_ref(), k, step.dir(), base).await?);
    }
    Ok(outcomes)
}

/// Answers every test set with the memory as it is and writes the step's files.
async fn evaluate_step(
    setup: &Setup,
    run: &RunArgs,
    spec: &'static SystemSpec,
    system: &dyn MemorySystem,
    k: usize,
    dir: &std::path::Path,
    base: CaseTiming,
) -> Result<Outcome, HarnessError> {
    let files = RunFiles::new(dir);
    let mut finished = Vec::new();
    for dataset in &setup.datasets {
        let label = format!(
            "{} {} ({})",
            spec.name,
            dataset.name(),
            dir.file_name().and_then(|n| n.to_str()).unwrap_or_default()
        );
        finished.extend(
            answer_rows(
                system,
                dataset,
                dataset.test.iter().collect(),
                k,
                run.threads,
                &label,
                base,
                |_| Ok(()),
            )
            .await?,
        );
    }
    finish(setup, &run.set_name, spec, &files, PREDICTIONS, finished).await
}
