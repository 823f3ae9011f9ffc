//! `off-policy` and `train-performance`: upstream's off-policy regime, timed, and its variant
//! that asks the training questions again.
//!
//! The memory learns from every training dialog of the set (shuffled with Python's
//! `random.seed(42); random.shuffle`), once: the memory lives in the engine store and later
//! runs reuse it (upstream's memory cache). Each dataset's test rows (training rows for
//! `train-performance`) are then answered; a corpus dataset (LoCoMo, DialSim) first adds its
//! conversation to the memory and removes it afterwards, so every corpus meets the dialog memory
//! alone, as upstream's per-dataset copies do. Predictions are appended to
//! `predict.partial.jsonl` as they finish, so `--resume` after an interruption continues where
//! the run stopped. Then the predictions are evaluated and summarised, and the time of each case
//! is recorded: memory processing (the set's dialog memorisation and the dataset's corpus
//! ingestion, amortised over its cases, as in the paper) against prediction (memory retrieval
//! and the answer model).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use mb_baselines::{CorpusMemory, SystemSpec};
use mb_datasets::results::{read_json, write_json, RunFiles, PREDICT, RUN_CONFIG};
use mb_datasets::SplitName;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::cases::{
    answer_rows, done, finish, print_table, read_partial, CaseTiming, Outcome, PartialLog,
};
use crate::run::{
    ensure_bookkeeping, memorize, new_run_dir, training_dialogs, MemoryBuilt, RunArgs, Setup,
    HARNESS_NAMESPACE,
};
use crate::runtime::HarnessError;

/// Arguments of `off-policy` and `train-performance`.
#[derive(Args, Debug)]
pub struct OffPolicyArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Continue the run in this result directory instead of starting a new one.
    #[arg(long)]
    resume: Option<PathBuf>,
}

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

/// What ingesting one dataset's corpus cost.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct CorpusCost {
    seconds: f64,
    llm_operations: u64,
}

const PARTIAL: &str = "predict.partial.jsonl";
const CORPUS_TIMING: &str = "corpus_timing.json";

/// Runs `off-policy` (`Questions::Test`) or `train-performance` (`Questions::Train`).
pub fn run(args: &OffPolicyArgs, questions: Questions) -> Result<(), HarnessError> {
    let setup = Setup::new(&args.run, true)?;
    if args.resume.is_some() && setup.specs.len() != 1 {
        return Err(HarnessError::Usage(
            "--resume continues one run: name its --baseline".into(),
        ));
    }
    let mut rows = Vec::new();
    for &spec in &setup.specs {
        rows.push(
            setup
                .runtime
                .block_on(run_system(args, questions, &setup, spec))?,
        );
    }
    print_table(&rows);
    Ok(())
}

async fn run_system(
    args: &OffPolicyArgs,
    questions: Questions,
    setup: &Setup,
    spec: &'static SystemSpec,
) -> Result<Outcome, HarnessError> {
    let run = &args.run;
    let files = match &args.resume {
        Some(dir) => {
            let files = RunFiles::new(dir);
            if !files.path(RUN_CONFIG).exists() {
                return Err(HarnessError::Usage(format!(
                    "--resume {}: not a run directory",
                    dir.display()
                )));
            }
            files
        }
        None => new_run_dir(run, questions.results_dir(), spec, json!({}))?,
    };
    let engine = setup.engine();
    ensure_bookkeeping(engine)?;
    // The memory of the set's dialogs, shared by off-policy and train-performance runs.
    let namespace = format!(
        "off-policy/{}/{}/{}",
        run.dataset_type, run.set_name, spec.name
    );
    let built_key = format!("memory:{namespace}");
    let built: Option<MemoryBuilt> = engine.get_state(HARNESS_NAMESPACE, &built_key)?;
    if built.is_none() && engine.namespace(&namespace).is_ok() {
        // An interrupted memorisation: start the memory again, as upstream does.
        engine.drop_namespace(&namespace)?;
    }
    let system = setup.system(spec, &namespace)?;
    let k = run
        .retrieve_k
        .unwrap_or(system.context().settings.retrieve_k);
    let corpus_key = format!("corpus:{namespace}");
    if let Some(left) = engine.get_state::<CorpusMemory>(HARNESS_NAMESPACE, &corpus_key)? {
        system.delete_corpus(&left)?;
        engine.delete_state(HARNESS_NAMESPACE, &corpus_key)?;
    }
    let built = match built {
        Some(built) => built,
        None => {
            let dialogs = training_dialogs(spec, &setup.datasets);
            let built = memorize(
                system.as_ref(),
                &format!("{} memorising dialogs", spec.name),
                &dialogs,
            )
            .await?;
            engine.put_state(HARNESS_NAMESPACE, &built_key, &built)?;
            built
        }
    };

    let partial = files.path(PARTIAL);
    let mut finished = read_partial(&partial)?;
    let finished_keys = done(&finished);
    let corpus_timing = files.path(CORPUS_TIMING);
    let mut corpus_costs: BTreeMap<String, CorpusCost> = if corpus_timing.exists() {
        read_json(&corpus_timing)?
    } else {
        BTreeMap::new()
    };
    let split = questions.split();
    let cases: usize = setup.datasets.iter().map(|d| d.rows(split).len()).sum();
    let per_case = |total: f64| total / cases.max(1) as f64;
    let mut log = PartialLog::open(&partial)?;
    for dataset in &setup.datasets {
        let todo: Vec<_> = dataset
            .rows(split)
            .iter()
            .filter(|row| !finished_keys.contains(&(dataset.name().to_string(), row.test_idx)))
            .collect();
        if todo.is_empty() {
            continue;
        }
        let corpus = match (&dataset.corpus, dataset.corpus_format()) {
            (Some(conversation), Some(format)) => {
                let started = Instant::now();
                let operations = system.stats()?.llm_operations;
                let memory = system.memorize_corpus(conversation, format).await?;
                engine.put_state(HARNESS_NAMESPACE, &corpus_key, &memory)?;
                let cost = corpus_costs.entry(dataset.name().to_string()).or_default();
                cost.seconds += started.elapsed().as_secs_f64();
                cost.llm_operations += system.stats()?.llm_operations.saturating_sub(operations);
                write_json(&corpus_timing, &corpus_costs)?;
                Some(memory)
            }
            _ => None,
        };
        let cost = corpus_costs
            .get(dataset.name())
            .copied()
            .unwrap_or_default();
        let dataset_cases = dataset.rows(split).len().max(1) as f64;
        let base = CaseTiming {
            memory_dialogs: per_case(built.seconds),
            memory_corpus: cost.seconds / dataset_cases,
            llm_calls_memory: per_case(built.llm_operations as f64)
                + cost.llm_operations as f64 / dataset_cases,
            ..CaseTiming::default()
        };
        let label = format!("{} {}", spec.name, dataset.name());
        let answered = answer_rows(
            system.as_ref(),
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
        if let Some(memory) = corpus {
            system.delete_corpus(&memory)?;
            engine.delete_state(HARNESS_NAMESPACE, &corpus_key)?;
        }
    }
    finish(setup, &run.set_name, spec, &files, PREDICT, finished).await
}
