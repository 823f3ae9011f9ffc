//! `feedback-usefulness`: upstream's `src/test_feedback.py` (the paper's Q1, swept by
//! `run_scripts/test_feedback.py`): does the simulated user's feedback help?
//!
//! Each training question is answered once with its own recorded dialog, feedback included, as
//! the context of upstream's prompt (read from the checkout at run time), and the dialog's
//! last assistant message stands as the answer to each test question (no model call): the
//! training side shows what the feedback gives, the test side what the recorded dialogs were
//! worth. Both are scored and summarized as single datasets, and `compare.json` holds the two
//! summaries.
//!
//! Upstream's restrictions hold: DialSim is not run; a LoCoMo dataset is answered by a memory
//! system holding its conversation (every `--baseline` with a memory, each on a fresh memory),
//! every other dataset by Vanilla (`wo_memory`), whose output is capped at the smaller of 2 048
//! tokens and the dataset's `max_output_len`. The command runs every dataset of the set, as
//! the sweep script runs them one by one. `--sample` slices each split as Python's
//! `rows[:sample]`; upstream's default, -1, leaves out each split's last row, as the paper's
//! runs did. A failed answer is recorded empty with its error and is not tried again.
//!
//! Results: `test_feedback/results/<type>/<set>/<system>/<dataset>/start_at_<stamp>/` with
//! `run_config.json`, `train_predicts.json`, `test_predicts.json`,
//! `{train,test}_evaluate_details.json`, `{train,test}_summary.json` and `compare.json`.

use futures::stream::{self, StreamExt};
use mb_baselines::{registry, MemorySystem, SystemSpec};
use mb_core::{Lang, Role};
use mb_datasets::catalog::DatasetType;
use mb_datasets::dataset::CorpusFormat;
use mb_datasets::row::{Dialog, Row};
use mb_datasets::Dataset;
use mb_eval::{builtin_statistics, summarize_run, Graders, Prediction, RunFiles};
use mb_llm::ops::Answer;
use mb_upstream::{Prompt, Wording};
use serde_json::{json, Value};

use crate::error::HarnessError;
use crate::run::dir::run_dir_in;
use crate::run::evaluation::score;
use crate::run::{RunArgs, RunSetup};
use crate::stdout::line;
use crate::store::drop_namespace_if_present;

/// Upstream's output cap of the feedback-usefulness runs (`config.get("max_tokens", 2048)`).
const MAX_TOKENS: u32 = 2048;

/// Arguments of `feedback-usefulness`.
#[derive(clap::Args, Debug)]
pub struct FeedbackUsefulnessArgs {
    /// The flags every regime takes (`--baseline`: the memory systems of LoCoMo datasets).
    #[command(flatten)]
    pub run: RunArgs,
    /// Each split's rows as Python's `rows[:sample]` (upstream's `--sample`): -1, the default,
    /// leaves out the last row; a count keeps the first rows.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub sample: i64,
}

/// Runs `feedback-usefulness` on every dataset of the set upstream runs it on.
pub fn run(args: &FeedbackUsefulnessArgs) -> Result<(), HarnessError> {
    if args.run.resume.is_some() {
        return Err(HarnessError::Usage(
            "feedback-usefulness runs afresh (upstream's memory is rebuilt each time): drop --resume"
                .into(),
        ));
    }
    let setup = RunSetup::new(&args.run, true)?;
    let vanilla = registry::get("wo_memory")?;
    let mut ran = 0;
    for dataset in &setup.datasets {
        let systems: Vec<&'static SystemSpec> = match dataset.corpus_format() {
            Some(CorpusFormat::DialSim) => {
                line(format_args!(
                    "{}: skipped: upstream does not run DialSim",
                    dataset.name()
                ))?;
                continue;
            }
            Some(CorpusFormat::Locomo) => setup
                .specs
                .iter()
                .copied()
                .filter(|s| !s.memoryless)
                .collect(),
            None => vec![vanilla],
        };
        if systems.is_empty() {
            line(format_args!(
                "{}: skipped: a LoCoMo dataset needs a memory system (--baseline)",
                dataset.name()
            ))?;
        }
        for spec in systems {
            let compare = setup
                .services
                .runtime
                .block_on(run_dataset(args, &setup, dataset, spec))?;
            line(format_args!("{} {}: {compare}", dataset.name(), spec.name))?;
            ran += 1;
        }
    }
    if ran == 0 {
        return Err(HarnessError::Usage(format!(
            "feedback-usefulness ran nothing on {}: no dataset it can run with these systems",
            args.run.set_name
        )));
    }
    Ok(())
}

/// Runs one dataset with one system; returns `compare.json`.
async fn run_dataset(
    args: &FeedbackUsefulnessArgs,
    setup: &RunSetup,
    dataset: &Dataset,
    spec: &'static SystemSpec,
) -> Result<Value, HarnessError> {
    let wording = &setup.services.llm.wording;
    let files = run_dir_in(
        &args.run,
        wording,
        "test_feedback/results",
        spec,
        json!({ "dataset": dataset.name(), "sample": args.sample }),
        Some(dataset.name()),
    )?;
    let namespace = format!("test_feedback/{}/{}", dataset.name(), spec.name);
    drop_namespace_if_present(setup.engine(), &namespace)?;
    let system = setup.system(spec, &namespace)?;
    if let (Some(conversation), Some(format)) = (&dataset.corpus, dataset.corpus_format()) {
        system.memorize_corpus(conversation, format).await?;
    }
    let stem = if dataset.corpus.is_some() {
        spec.dialog_stem
    } else {
        ""
    };
    let cap = MAX_TOKENS.min(dataset.config.max_output_tokens());
    let train = sliced(&dataset.train, args.sample);
    // Vanilla retrieves nothing; a memory, its run's number of memories.
    let k = if spec.memoryless {
        None
    } else {
        Some(setup.retrieve_k(spec)?)
    };
    let answered: Vec<Value> = stream::iter(train.iter().map(|row| {
        let dialog = row.dialogs.get(stem);
        answer_with_feedback(system.as_ref(), k, wording, row, dialog, cap)
    }))
    .buffered(args.run.threads.max(1))
    .collect()
    .await;
    let test: Vec<Value> = sliced(&dataset.test, args.sample)
        .iter()
        .map(|row| {
            json!({
                "test_idx": row.test_idx,
                "response": row.dialogs.get(stem).map(last_answer).unwrap_or_default(),
                "messages": [],
            })
        })
        .collect();
    let mut compare = json!({});
    for (side, predictions) in [("train", answered), ("test", test)] {
        files.write(&format!("{side}_predicts.json"), &predictions)?;
        let summary = evaluate_side(setup, &files, dataset, side, &predictions).await?;
        compare[format!("{side}_performance")] = summary["summary"].clone();
    }
    // Dropped: the next run builds it afresh, as upstream deletes its cache first.
    drop(system);
    drop_namespace_if_present(setup.engine(), &namespace)?;
    files.write("compare.json", &compare)?;
    Ok(compare)
}

/// Scores one side's predictions as a single dataset; writes and returns its summary.
async fn evaluate_side(
    setup: &RunSetup,
    files: &RunFiles,
    dataset: &Dataset,
    side: &str,
    predictions: &[Value],
) -> Result<Value, HarnessError> {
    let predictions: Vec<Prediction> = predictions
        .iter()
        .map(|p| Prediction {
            test_idx: p["test_idx"].as_u64().unwrap_or_default(),
            messages: p["messages"].as_array().cloned().unwrap_or_default(),
            response: p["response"].as_str().unwrap_or_default().to_string(),
            dataset: dataset.name().to_string(),
        })
        .collect();
    let datasets = std::slice::from_ref(dataset);
    let graders = Graders::of(&setup.services.llm);
    let details = score(files, datasets, &predictions, graders).await?;
    files.write(&format!("{side}_evaluate_details.json"), &details)?;
    // Summarized where it was scored, as upstream's test_feedback.py does.
    let counted = setup.numpy_scores.apply(datasets, &details);
    let summary = summarize_run(
        DatasetType::Single,
        dataset.name(),
        std::slice::from_ref(&dataset.config),
        &counted,
        &builtin_statistics()?,
    )?;
    files.write(&format!("{side}_summary.json"), &summary)?;
    Ok(summary)
}

/// Answers a training row with its dialog in upstream's prompt, once, retrieving `k` memories
/// (`None`: a memoryless system); a failure is recorded with an empty response, as upstream
/// records it.
async fn answer_with_feedback(
    system: &dyn MemorySystem,
    k: Option<usize>,
    wording: &Wording,
    row: &Row,
    dialog: Option<&Dialog>,
    cap: u32,
) -> Value {
    let failed = |error: String| json!({"test_idx": row.test_idx, "response": "", "messages": [], "error": error});
    let Some(dialog) = dialog else {
        return failed("the row has no recorded dialog".into());
    };
    let mut messages = row.input.initial_messages();
    let Some(last) = messages.last_mut() else {
        return failed("the row has no question".into());
    };
    match feedback_prompt(wording, row.lang, &dialog_text(dialog), &last.content) {
        Ok(prompt) => last.content = prompt,
        Err(e) => return failed(e.to_string()),
    }
    let answered = match k {
        // Vanilla sends the messages as they are, with the run's output cap.
        None => {
            let operation = Answer::new(messages.clone()).with_max_tokens(cap);
            system
                .context()
                .llm
                .answer
                .run(&operation, row.lang)
                .await
                .map(|response| (messages, response))
                .map_err(|e| e.to_string())
        }
        // A memory system retrieves with the whole prompt and wraps it in its own template.
        Some(k) => system
            .answer(&messages, row.lang, k)
            .await
            .map(|a| (a.messages, a.response))
            .map_err(|e| e.to_string()),
    };
    match answered {
        Ok((messages, response)) => json!({
            "test_idx": row.test_idx,
            "response": response,
            "messages": messages,
        }),
        Err(error) => failed(error),
    }
}

/// Upstream's prompt filled with the dialog and the question; without a checkout, the layout
/// in the project's words.
fn feedback_prompt(
    wording: &Wording,
    lang: Lang,
    dialog_text: &str,
    question: &str,
) -> Result<String, HarnessError> {
    let values = [("dialog_text", dialog_text), ("question", question)];
    if let Some(upstream) = wording.checkout() {
        let prompt = match lang {
            Lang::En => Prompt::FeedbackUsefulnessEn,
            Lang::Zh => Prompt::FeedbackUsefulnessZh,
        };
        return Ok(upstream.render(prompt, &values)?);
    }
    wording.note_paraphrased("feedback-usefulness prompt");
    // Upstream's lines after the first keep its source's indentation of four spaces.
    Ok(match lang {
        Lang::En => format!(
            "Context:\n    {dialog_text}\n\n    User: \n    {question}\n\n    \
             Reply to the user's input above naturally and appropriately, basing the reply on \
             the context given."
        ),
        Lang::Zh => format!(
            "相关知识：\n    {dialog_text}\n\n    用户输入：\n    {question}\n\n    \
             请依据以上相关知识，自然、恰当地回复用户的输入。"
        ),
    })
}

/// The dialog as upstream writes it into the prompt: `role: content` per message, every one
/// (system included) followed by a newline.
fn dialog_text(dialog: &Dialog) -> String {
    dialog
        .messages
        .iter()
        .map(|m| format!("{}: {}\n", m.role.as_str(), m.content))
        .collect()
}

/// The dialog's last assistant message: what upstream takes as the test side's answer.
fn last_answer(dialog: &Dialog) -> String {
    dialog
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

/// `rows[:sample]`, as Python slices.
fn sliced<T>(rows: &[T], sample: i64) -> &[T] {
    let end = if sample >= 0 {
        usize::try_from(sample)
            .unwrap_or(usize::MAX)
            .min(rows.len())
    } else {
        let back = usize::try_from(sample.unsigned_abs()).unwrap_or(usize::MAX);
        rows.len().saturating_sub(back)
    };
    &rows[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sliced_as_python_slices_them() {
        let rows = [10, 11, 12];
        // Python: [10, 11, 12][:sample]
        for (sample, expected) in [
            (-1, &[10, 11][..]),
            (-2, &[10][..]),
            (-3, &[][..]),
            (-9, &[][..]),
            (i64::MIN, &[][..]),
            (0, &[][..]),
            (2, &[10, 11][..]),
            (9, &[10, 11, 12][..]),
            (i64::MAX, &[10, 11, 12][..]),
        ] {
            assert_eq!(sliced(&rows, sample), expected, "{sample}");
        }
    }

    #[test]
    fn the_paraphrase_keeps_upstreams_layout() {
        let prompt =
            feedback_prompt(&Wording::paraphrased(), Lang::En, "user: hi\n", "Q?").unwrap();
        assert!(
            prompt.starts_with("Context:\n    user: hi\n\n\n    User: \n    Q?\n\n    "),
            "{prompt:?}"
        );
    }
}
