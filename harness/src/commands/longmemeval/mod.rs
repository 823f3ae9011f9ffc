//! `off-policy --longmemeval FILE`: LongMemEval's question answering through the off-policy
//! regime, each question's haystack being its corpus.
//!
//! The file is read one question at a time ([`mb_datasets::longmemeval::for_each_instance_in`]),
//! so even the 2.75 GB M file runs in bounded memory. Each question is answered on a fresh
//! memory holding its haystack ([`case`]): the memory's units are retrieved, shown to the answer
//! model with the reading prompt (plain, or Chain-of-Note with the units as JSON sorted by
//! date) and the answer is judged with the prompt of its question type, in our words or, with
//! `--longmemeval-upstream DIR`, the official ones read from a LongMemEval checkout
//! ([`mb_upstream::LongMemEval`], passed to each request as it is built: see
//! `mb_eval::longmemeval::reading`). Each finished question
//! is appended to the run's log, so `--resume` continues an interrupted run; the predictions are
//! written in the official format (`question_id`, `hypothesis`, `autoeval_label`) beside
//! accuracy per type and the cost of every case ([`summary`]).

mod case;
mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, ValueEnum};
use mb_baselines::SystemSpec;
use mb_datasets::longmemeval::retrieval::History;
use mb_datasets::longmemeval::{for_each_instance_in, Instance, LongMemEvalError};
use mb_eval::longmemeval::judge::JudgePrompts;
use mb_eval::longmemeval::reading::ReadingStyle;
use mb_llm::RoleSettings;
use mb_upstream::LongMemEval;
use serde_json::{json, Value};

use crate::error::HarnessError;
use crate::run::cases::{Outcome, PARTIAL};
use crate::run::dir::run_dir;
use crate::run::partial_log::PartialLog;
use crate::run::progress::ModelProgress;
use crate::run::setup::systems_without_set;
use crate::run::table::print_table;
use crate::run::{RunArgs, Services};
pub use case::LmeCase;
use case::{answer_instance, Reading, Words};

/// The flags of `off-policy` that run LongMemEval instead of a MemoryBench set.
#[derive(Args, Debug, Clone)]
pub struct LongMemEvalArgs {
    /// A LongMemEval file (`longmemeval_s_cleaned.json`, `longmemeval_oracle.json`, …): answer
    /// its questions instead of the set's, each on a memory of its own haystack, judged per
    /// question type. `--limit N` answers the first N questions.
    #[arg(long, value_name = "FILE")]
    pub longmemeval: Option<PathBuf>,
    /// LongMemEval: how the retrieved history is shown to the answer model.
    #[arg(long, value_enum, default_value_t = ReadingArg::Plain)]
    pub reading: ReadingArg,
    /// LongMemEval: the turns memorized, `all` (the default here: some questions ask what the
    /// assistant said) or `user` (the official retrieval evaluation's corpus).
    #[arg(long = "history", value_enum, default_value_t = HistoryArg::All)]
    pub history: HistoryArg,
    /// LongMemEval: judge templates replacing ours, a JSON object with one template per question
    /// type and one for `abstention`, each holding {question}, {answer} and {response}
    /// (`scripts/longmemeval_judge_prompts.py` writes the official ones from a LongMemEval
    /// checkout). Deprecated: `--longmemeval-upstream` reads them, and the reading's, itself.
    #[arg(long = "judge-prompts", value_name = "FILE")]
    pub judge_prompts: Option<PathBuf>,
    /// LongMemEval: a LongMemEval checkout (github.com/xiaowu0162/LongMemEval, commit
    /// 9e0b455f4ef0): the reading prompt, Chain-of-Note's notes and the judge are then sent in
    /// the official words, read from its sources and checked against the known version (a
    /// changed checkout is refused, naming file and function).
    #[arg(
        long = "longmemeval-upstream",
        value_name = "DIR",
        env = "LONGMEMEVAL_UPSTREAM",
        conflicts_with = "judge_prompts"
    )]
    pub longmemeval_upstream: Option<PathBuf>,
}

/// `--history`: the turns of a haystack memorized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryArg {
    /// The user's turns only (official).
    User,
    /// Every turn.
    All,
}

impl HistoryArg {
    /// The history the dataset reader gives.
    pub fn history(self) -> History {
        match self {
            HistoryArg::User => History::User,
            HistoryArg::All => History::All,
        }
    }
}

/// `--reading`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReadingArg {
    /// The official plain reading: the items as dated sessions, then the question.
    Plain,
    /// The official Chain-of-Note: a reading note per item (one call each), then the answer
    /// from the notes, step by step.
    ChainOfNote,
    /// Ours: Chain-of-Note in one call (the items as JSON; notes, then the answer).
    ChainOfNoteOneCall,
}

impl ReadingArg {
    fn style(self) -> ReadingStyle {
        match self {
            ReadingArg::Plain => ReadingStyle::Plain,
            ReadingArg::ChainOfNote => ReadingStyle::ChainOfNote,
            ReadingArg::ChainOfNoteOneCall => ReadingStyle::ChainOfNoteOneCall,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ReadingArg::Plain => "plain",
            ReadingArg::ChainOfNote => "chain-of-note",
            ReadingArg::ChainOfNoteOneCall => "chain-of-note-one-call",
        }
    }
}

/// Runs LongMemEval's questions in `path` for every system `run --baseline` names (memory
/// systems only: a memoryless one would need the whole haystack in its prompt).
pub fn run(run: &RunArgs, args: &LongMemEvalArgs, path: &Path) -> Result<(), HarnessError> {
    let specs = systems_without_set(run, false)?;
    let words = match (&args.longmemeval_upstream, &args.judge_prompts) {
        (Some(dir), _) => {
            Words::Official(Arc::new(LongMemEval::open(dir).map_err(|e| {
                HarnessError::Usage(format!("--longmemeval-upstream {e}"))
            })?))
        }
        (None, Some(file)) => Words::JudgeTemplates(Arc::new(
            JudgePrompts::from_file(file)
                .map_err(|e| HarnessError::Usage(format!("--judge-prompts {e}")))?,
        )),
        (None, None) => Words::Ours,
    };
    let services = Services::start(run, &specs, false)?;
    // Result directories live under off-policy/longmemeval/<file stem>/<system>/.
    let mut place = run.clone();
    place.dataset_type = "longmemeval".into();
    place.set_name = path
        .file_stem()
        .map_or_else(|| "file".into(), |s| s.to_string_lossy().into_owned());
    let judge_model = match run.llm.settings()?.judge {
        RoleSettings::Offline => "offline (lexical proxy)".to_string(),
        RoleSettings::Openai(endpoint) | RoleSettings::Anthropic(endpoint) => endpoint.model,
    };
    let mut rows = Vec::new();
    for spec in specs {
        rows.push(run_system(
            &place,
            args,
            path,
            &services,
            spec,
            &judge_model,
            words.clone(),
        )?);
    }
    print_table(&rows);
    Ok(())
}

/// Whether to read on after a question.
pub enum Next {
    /// Read the next question.
    Continue,
    /// Stop reading (`--limit` reached).
    Stop,
}

/// Why reading the file stopped early.
enum Stop {
    Limit,
    Data(LongMemEvalError),
    Failed(HarnessError),
}

impl From<LongMemEvalError> for Stop {
    fn from(error: LongMemEvalError) -> Stop {
        Stop::Data(error)
    }
}

/// Calls `each` with every question of the LongMemEval file at `path`, one instance in memory
/// at a time, until it says [`Next::Stop`]. A question whose evidence names a session its
/// haystack lacks is not passed on but listed in `broken`; a malformed instance is an error
/// naming the file, the instance, its `question_id` and the field.
pub fn for_each_question(
    path: &Path,
    broken: &mut Vec<Value>,
    mut each: impl FnMut(Instance) -> Result<Next, HarnessError>,
) -> Result<(), HarnessError> {
    let outcome = for_each_instance_in(path, |instance: Instance| -> Result<(), Stop> {
        let unknown = instance.unknown_answer_sessions();
        if !unknown.is_empty() {
            broken.push(json!({
                "index": instance.index,
                "question_id": instance.question_id,
                "unknown_answer_session_ids": unknown,
            }));
            return Ok(());
        }
        match each(instance).map_err(Stop::Failed)? {
            Next::Continue => Ok(()),
            Next::Stop => Err(Stop::Limit),
        }
    });
    match outcome {
        Ok(_) | Err(Stop::Limit) => Ok(()),
        Err(Stop::Data(error)) => Err(HarnessError::File {
            path: path.display().to_string(),
            detail: error.to_string(),
        }),
        Err(Stop::Failed(error)) => Err(error),
    }
}

fn run_system(
    place: &RunArgs,
    args: &LongMemEvalArgs,
    path: &Path,
    services: &Services,
    spec: &'static SystemSpec,
    judge_model: &str,
    words: Words,
) -> Result<Outcome, HarnessError> {
    let history = args.history.history();
    let files = run_dir(
        place,
        &services.llm.wording,
        "off-policy",
        spec,
        json!({
            "longmemeval": path.display().to_string(),
            "reading": args.reading.name(),
            "history": format!("{:?}", args.history).to_lowercase(),
            "judge_prompts": args.judge_prompts.as_ref().map(|p| p.display().to_string()),
            "longmemeval_prompts": words.source(),
        }),
    )?;
    let k = services.retrieve_k(spec)?;
    let reading = Reading {
        style: args.reading.style(),
        history,
        k,
        words,
    };
    let limit = place
        .limit
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let (mut log, mut finished) = PartialLog::<LmeCase>::open(&files.path(PARTIAL))?;
    let mut broken: Vec<Value> = Vec::new();
    let label = format!("{} LongMemEval", spec.name);
    let bar = match limit {
        Some(limit) => ModelProgress::new(limit as u64, &label, "questions", &services.llm),
        None => ModelProgress::open_ended(&label, "questions", &services.llm),
    };
    for_each_question(path, &mut broken, |instance| {
        if limit.is_some_and(|limit| instance.index >= limit) {
            return Ok(Next::Stop);
        }
        if !log.holds(&instance.question_id) {
            let case = services
                .runtime
                .block_on(answer_instance(services, spec, &instance, &reading))
                .map_err(|source| HarnessError::Question {
                    file: path.display().to_string(),
                    question: mb_core::excerpt(&instance.question_id, 200).into_owned(),
                    source: Box::new(source),
                })?;
            log.append(&case)?;
            log.sync()?;
            finished.push(case);
        }
        bar.inc();
        Ok(Next::Continue)
    })?;
    drop(bar);
    if finished.is_empty() && broken.is_empty() {
        return Err(HarnessError::Usage(format!(
            "{}: holds no LongMemEval question (an empty list)",
            path.display()
        )));
    }
    summary::write(
        &files,
        spec,
        &services.llm,
        finished,
        broken,
        json!({
            "file": path.display().to_string(),
            "variant": mb_datasets::longmemeval::variant(path),
            "reading": args.reading.name(),
            "history": format!("{:?}", args.history).to_lowercase(),
            "retrieve_k": k,
            "judge": judge_model,
            "longmemeval_prompts": reading.words.source(),
        }),
    )
}
