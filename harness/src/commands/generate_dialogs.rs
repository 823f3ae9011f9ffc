//! `generate-dialogs`: the training dialogs off-policy learns from, for data that lacks them.
//!
//! As upstream: for every training row, the assistant answers, then for up to `--max-rounds − 1`
//! rounds the simulated user reacts (implicit feedback `{round, implicit_action, terminated}`,
//! rounds from 1) and, unless it ends the conversation, says something the assistant answers.
//! Non-corpus datasets are answered by the plain answer model (upstream's `basic.py`); corpus
//! datasets (LoCoMo, DialSim) by the chosen memory system over the dataset's corpus in the first
//! round (its prompt with memory replaces the question, which is kept as `origin_content`) and by
//! the plain model afterwards (upstream's `reading.py`), giving the `dialog_<stem>` column. The
//! set is written as a MemoryBench-layout directory that `--data` reads.

use std::path::PathBuf;

use clap::Args;
use futures::stream::{self, StreamExt, TryStreamExt};
use mb_datasets::row::{Dialog, Row};
use mb_datasets::source::StoredDataset;
use mb_datasets::InMemorySource;
use mb_eval::evaluator_for;

use crate::error::HarnessError;
use crate::run::converse::{converse, FeedbackAnswers, Opening, Rounds};
use crate::run::progress::progress;
use crate::run::{RunArgs, RunSetup};
use crate::stdout::line;
use crate::store::drop_namespace_if_present;

/// Arguments of `generate-dialogs`.
#[derive(Args, Debug)]
pub struct DialogArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Where to write the set with its dialogs (a MemoryBench-layout directory).
    #[arg(long)]
    out: PathBuf,
    /// Assistant turns per dialog at most.
    #[arg(long, default_value_t = 3)]
    max_rounds: usize,
}

impl DialogArgs {
    /// Upstream's dialog generation: every feedback answered, rounds numbered from 1.
    fn rounds(&self) -> Rounds {
        Rounds {
            max: self.max_rounds,
            first_number: 1,
            feedback_answers: FeedbackAnswers::Answered,
        }
    }
}

/// Runs `generate-dialogs`.
pub fn run(args: &DialogArgs) -> Result<(), HarnessError> {
    if args.run.resume.is_some() {
        return Err(HarnessError::Usage(
            "generate-dialogs has no --resume: run it again, and the model answers recorded \
             before the interruption are replayed from the store (--llm-cache record, the \
             default)"
                .into(),
        ));
    }
    let setup = RunSetup::new(&args.run, true)?;
    let [spec] = setup.specs.as_slice() else {
        return Err(HarnessError::Usage(
            "generate-dialogs writes one system's dialogs: name its --baseline".into(),
        ));
    };
    let source = args
        .run
        .data
        .source(setup.services.llm.wording.checkout())?;
    let mut out = InMemorySource::new("generated");
    for dataset in &setup.datasets {
        let evaluator = evaluator_for(&dataset.config)?;
        let (stem, train) = match (&dataset.corpus, dataset.corpus_format()) {
            (Some(conversation), Some(format)) => {
                let namespace = format!("dialogs/{}/{}", dataset.name(), spec.name);
                drop_namespace_if_present(setup.engine(), &namespace)?;
                let system = setup.system(spec, &namespace)?;
                setup
                    .services
                    .runtime
                    .block_on(system.memorize_corpus(conversation, format))?;
                let k = setup.retrieve_k(spec)?;
                // Upstream reads sequentially: each dialog sees the same corpus memory.
                let mut train = Vec::new();
                let bar = progress(
                    dataset.train.len() as u64,
                    &format!("{} {}", spec.name, dataset.name()),
                );
                for row in &dataset.train {
                    let dialog = setup.services.runtime.block_on(converse(
                        &setup,
                        dataset,
                        row,
                        evaluator.as_ref(),
                        args.rounds(),
                        Opening::PromptRecorded(system.as_ref(), k),
                    ))?;
                    train.push(with_dialog(row, spec.dialog_stem, dialog));
                    bar.inc(1);
                }
                bar.finish_and_clear();
                (spec.dialog_stem, train)
            }
            _ => {
                let bar = progress(
                    dataset.train.len() as u64,
                    &format!("dialogs {}", dataset.name()),
                );
                let dialogs: Vec<Dialog> = setup.services.runtime.block_on(
                    stream::iter(dataset.train.iter().map(|row| {
                        let bar = &bar;
                        let evaluator = evaluator.as_ref();
                        let setup = &setup;
                        async move {
                            let dialog = converse(
                                setup,
                                dataset,
                                row,
                                evaluator,
                                args.rounds(),
                                Opening::Plain,
                            )
                            .await;
                            bar.inc(1);
                            dialog
                        }
                    }))
                    .buffered(args.run.threads.max(1))
                    .try_collect(),
                )?;
                bar.finish_and_clear();
                let train = dataset
                    .train
                    .iter()
                    .zip(dialogs)
                    .map(|(row, d)| with_dialog(row, "", d))
                    .collect();
                ("", train)
            }
        };
        out.insert(
            dataset.name(),
            StoredDataset {
                train: train.iter().map(Row::to_columns).collect(),
                test: dataset.test.iter().map(Row::to_columns).collect(),
                corpus: source.corpus_text(dataset.name())?,
            },
        );
        tracing::info!(
            "{}: dialogs in column {:?}",
            dataset.name(),
            if stem.is_empty() {
                "dialog".to_string()
            } else {
                format!("dialog_{stem}")
            }
        );
    }
    out.write_hf_layout(&args.out)?;
    line(format_args!(
        "dialogs of {} written to {}",
        setup
            .datasets
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", "),
        args.out.display()
    ))?;
    Ok(())
}

fn with_dialog(row: &Row, stem: &str, dialog: Dialog) -> Row {
    let mut row = row.clone();
    row.dialogs.insert(stem.to_string(), dialog);
    row
}
