//! `on-policy`: the memory learns from dialogs it takes part in.
//!
//! As upstream: one fresh memory receives every corpus of the set; then for each of `--step`
//! steps, `--batch-size` training rows are drawn (Python's `random.seed(42)` once, then
//! `random.sample` per step, so rows may recur across steps); the system answers each with its
//! memory, the simulated user reacts (rule-based on LoCoMo/DialSim, the simulator role
//! elsewhere), the dialogs are written to `step_<i>/train_dialogs.json` and memorised, and the
//! test sets are answered and evaluated in `step_<i>/`.
//!
//! Upstream's follow-up loop never appends the assistant's follow-up (a missing `break`), so
//! its dialogs end with the answer or with the user's first feedback; we record the same dialogs
//! without making the follow-up calls whose output upstream discards.

use std::time::Instant;

use clap::Args;
use futures::stream::{self, StreamExt, TryStreamExt};
use mb_baselines::{MemorySystem, SystemSpec, TrainingDialog};
use mb_datasets::evaluate::{evaluator_for, Evaluator};
use mb_datasets::results::RunFiles;
use mb_datasets::row::{DialogMessage, Row};
use mb_datasets::{Dataset, PyRandom};
use mb_llm::Role;
use serde_json::{json, Map, Value};

use crate::cases::{answer_test_sets, print_table, CaseTiming, Outcome};
use crate::feedback::react;
use crate::run::{memory_with_corpora, new_run_dir, test_cases, RunArgs, Setup};
use crate::runtime::HarnessError;

/// Arguments of `on-policy`.
#[derive(Args, Debug)]
pub struct OnPolicyArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Steps of collecting dialogs, memorising them and evaluating.
    #[arg(long, default_value_t = 10)]
    step: usize,
    /// Training rows drawn per step.
    #[arg(long, default_value_t = 100)]
    batch_size: usize,
}

/// Runs `on-policy`.
pub fn run(args: &OnPolicyArgs) -> Result<(), HarnessError> {
    let setup = Setup::new(&args.run, false)?;
    let mut rows = Vec::new();
    for &spec in &setup.specs {
        rows.extend(setup.runtime.block_on(run_system(args, &setup, spec))?);
    }
    print_table(&rows);
    Ok(())
}

/// One collected training dialog.
struct Collected<'a> {
    dataset: &'a Dataset,
    row: &'a Row,
    pool_index: usize,
    dialog: Vec<DialogMessage>,
    feedback: Value,
}

async fn run_system(
    args: &OnPolicyArgs,
    setup: &Setup,
    spec: &'static SystemSpec,
) -> Result<Vec<Outcome>, HarnessError> {
    let run = &args.run;
    let files = new_run_dir(
        run,
        "on-policy/results",
        spec,
        json!({"step": args.step, "batch_size": args.batch_size}),
    )?;
    // On-policy time is the dialogs' memorisation per step; the corpora's share is not counted.
    let (system, k, _corpus) = memory_with_corpora(setup, run, spec, "on-policy", &files).await?;
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
    let mut rng = PyRandom::new(42);
    let cases = test_cases(setup);
    let mut outcomes = Vec::new();
    for step in 0..args.step {
        let drawn = rng
            .sample(&positions, args.batch_size.min(pool.len()))
            .unwrap_or_default();
        let collected: Vec<Collected> = stream::iter(drawn.into_iter().map(|pool_index| {
            let (dataset_index, row) = pool[pool_index];
            collect(
                setup,
                system.as_ref(),
                &setup.datasets[dataset_index],
                row,
                evaluators[dataset_index].as_ref(),
                k,
                pool_index,
            )
        }))
        .buffered(run.threads.max(1))
        .try_collect()
        .await?;
        let step_files = RunFiles::new(files.dir().join(format!("step_{step}")));
        let written: Vec<Value> = collected
            .iter()
            .map(|c| {
                json!({
                    "test_idx": c.row.test_idx,
                    "dataset": c.dataset.name(),
                    "training_set_idx": c.pool_index,
                    "dialog": c.dialog,
                    "implicit_feedback": c.feedback,
                })
            })
            .collect();
        step_files.write("train_dialogs.json", &written)?;
        let started = Instant::now();
        let before = system.stats()?.llm_operations;
        for c in &collected {
            let dialog = TrainingDialog {
                test_idx: c.row.test_idx,
                dataset: c.dataset.name(),
                lang: c.row.lang,
                messages: &c.dialog,
            };
            system.memorize_dialog(dialog).await?;
        }
        let base = CaseTiming {
            memory_dialogs: started.elapsed().as_secs_f64() / cases,
            llm_calls_memory: system.stats()?.llm_operations.saturating_sub(before) as f64 / cases,
            ..CaseTiming::default()
        };
        let tag = format!("step {step}");
        let predictions = "test_predicts.json";
        outcomes.push(
            answer_test_sets(
                setup,
                run,
                spec,
                system.as_ref(),
                k,
                &step_files,
                predictions,
                base,
                &tag,
            )
            .await?,
        );
    }
    Ok(outcomes)
}

/// One training dialog: the system answers with its memory, the simulated user reacts once.
async fn collect<'a>(
    setup: &Setup,
    system: &dyn MemorySystem,
    dataset: &'a Dataset,
    row: &'a Row,
    evaluator: &dyn Evaluator,
    k: usize,
    pool_index: usize,
) -> Result<Collected<'a>, HarnessError> {
    let initial = row.input.initial_messages();
    let answered = system.answer(&initial, row.lang, k).await?;
    let mut dialog: Vec<DialogMessage> = answered
        .messages
        .iter()
        .zip(initial.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(sent, original)| {
            let mut extra = Map::new();
            // The prompt sent carries the memory; keep the question as it was asked.
            if let Some(original) = original.filter(|o| o.content != sent.content) {
                extra.insert(
                    "origin_content".into(),
                    Value::String(original.content.clone()),
                );
            }
            DialogMessage {
                role: sent.role,
                content: sent.content.clone(),
                extra,
            }
        })
        .collect();
    dialog.push(DialogMessage {
        role: Role::Assistant,
        content: answered.response.clone(),
        extra: Map::new(),
    });
    let conversation: Vec<_> = dialog.iter().map(DialogMessage::message).collect();
    let reaction = react(dataset, row, &conversation, evaluator, &setup.llm).await?;
    if !reaction.end && !reaction.text.is_empty() {
        dialog.push(DialogMessage {
            role: Role::User,
            content: reaction.text.clone(),
            extra: Map::new(),
        });
    }
    let action = serde_json::to_value(reaction.action).unwrap_or(Value::Null);
    let feedback = json!([{"round": 0, "implicit_action": action, "terminated": reaction.end}]);
    Ok(Collected {
        dataset,
        row,
        pool_index,
        dialog,
        feedback,
    })
}
