//! `mb-harness`: the MemoryBench benchmark on memorybench-rs.
//!
//! Commands so far: `off-policy`, `stepwise-off-policy`, `on-policy` and `train-performance`
//! (upstream's four regimes, with the time of every case), `action-feedback` and
//! `feedback-usefulness` (upstream's other experiments),
//! `evaluate` and `summarize` (on an existing run directory), `import` (upstream's raw files), `generate-dialogs`, `report` (HTML with charts),
//! `retrieve` (retrieval quality of a memory system on LoCoMo-style conversations, without an
//! LLM) and `list` (datasets, sets and memory systems). Errors are printed as one line;
//! `RUST_LOG` controls logging.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mb_harness::commands::{
    action_feedback, evaluate, feedback_usefulness, generate_dialogs, import, list, off_policy,
    on_policy, plan, report, retrieve, serve, sft, stepwise, summarize, sweep, train_performance,
};
use mb_harness::HarnessError;

/// MemoryBench on memorybench-rs.
#[derive(Parser)]
// A flag given twice replaces the first: `--resume` puts a run's recorded command first.
#[command(name = "mb-harness", version, about, args_override_self = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Append progress events (the bars' counts) to FILE as JSON lines, for `serve`.
    #[arg(long, global = true, hide = true, value_name = "FILE")]
    progress_file: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Memorize the set's training dialogs, answer its test questions, evaluate, and time
    /// memory processing against prediction for every case (or, with --longmemeval FILE,
    /// answer LongMemEval's questions, each on a memory of its own haystack).
    OffPolicy(off_policy::OffPolicyArgs),
    /// Let the memory learn from dialogs it takes part in: per step, answer sampled training
    /// questions, collect the simulated user's feedback, memorize, evaluate.
    OnPolicy(on_policy::OnPolicyArgs),
    /// Add the set's training dialogs to an initially empty memory in batches, answering the
    /// test sets before the first batch and after each.
    StepwiseOffPolicy(stepwise::StepwiseArgs),
    /// As off-policy, but ask the training questions whose dialogs are in memory.
    TrainPerformance(train_performance::RunArgs),
    /// As off-policy, with a memory of only the training dialogs whose implicit feedback holds
    /// the action (upstream's action-feedback experiment).
    ActionFeedback(action_feedback::ActionFeedbackArgs),
    /// Fine-tune the local model with LoRA on the first-round answers of the training dialogs
    /// whose users liked (or copied) them (upstream's SFT baseline), an adapter per epoch.
    SftTrain(sft::train::SftTrainArgs),
    /// Answer the test questions with the model an SFT adapter adapts, without memory, served
    /// by the local llama.cpp server.
    SftPredict(sft::predict::SftPredictArgs),
    /// Answer each training question with its recorded feedback dialog as context, and score
    /// the dialogs' own answers to the test questions (upstream's test_feedback, the paper's Q1).
    FeedbackUsefulness(feedback_usefulness::FeedbackUsefulnessArgs),
    /// Record training dialogs (assistant and simulated user) for data without them, written as
    /// a directory that --data reads.
    GenerateDialogs(generate_dialogs::DialogArgs),
    /// Score a run's predictions again (e.g. with a judge model) and rewrite its summary.
    Evaluate(evaluate::RunDirArgs),
    /// Recompute a run's summary from its evaluation details.
    Summarize(evaluate::RunDirArgs),
    /// Convert upstream's raw files (LoCoMo, NFCats, LexEval-QA, HelloBench) into a directory
    /// that `--data` reads.
    Import(import::ImportArgs),
    /// An HTML page with charts comparing the runs under result directories.
    Report(report::ReportArgs),
    /// Retrieval quality of a memory system against LoCoMo evidence turns (no LLM needed).
    Retrieve(retrieve::RetrieveArgs),
    /// The runs of a sweep (regimes × sets × systems) and the shard each belongs to.
    Plan(plan::PlanArgs),
    /// Run one shard of a sweep (`--shard I/N`), each run as its own process; shards share
    /// only the output directory, and `report` merges their results.
    Sweep(sweep::SweepArgs),
    /// A web page to configure, launch, watch and browse runs (on loopback by default).
    Serve(serve::ServeArgs),
    /// The datasets, domains, tasks and memory systems the harness knows.
    List,
}

fn main() -> ExitCode {
    // A bug (or a library's assertion on damaged input) reads as one line, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let message = mb_core::panic::panic_text(info.payload()).unwrap_or("panic");
        let place = info
            .location()
            .map(|l| format!(" ({}:{})", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("mb-harness: internal error{place}: {message}");
    }));
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = mb_harness::with_recorded_flags(std::env::args_os().collect());
    let cli = Cli::parse_from(args);
    if let Some(path) = &cli.progress_file {
        if let Err(error) = mb_harness::record_progress_to(path) {
            eprintln!("mb-harness: {error}");
            return ExitCode::FAILURE;
        }
    }
    let outcome = match cli.command {
        Command::OffPolicy(args) => off_policy::run(&args),
        Command::OnPolicy(args) => on_policy::run(&args),
        Command::StepwiseOffPolicy(args) => stepwise::run(&args),
        Command::TrainPerformance(args) => train_performance::run(&args),
        Command::ActionFeedback(args) => action_feedback::run(&args),
        Command::FeedbackUsefulness(args) => feedback_usefulness::run(&args),
        Command::SftTrain(args) => sft::train::run(&args),
        Command::SftPredict(args) => sft::predict::run(&args),
        Command::GenerateDialogs(args) => generate_dialogs::run(&args),
        Command::Evaluate(args) => evaluate::run(&args),
        Command::Summarize(args) => summarize::run(&args),
        Command::Import(args) => import::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Retrieve(args) => retrieve::run(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::List => list::run(),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(HarnessError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(error) => {
            // An error may quote what it refused, and that may be megabytes long.
            let message = error.to_string();
            eprintln!(
                "mb-harness: {}",
                mb_core::excerpt(&message, mb_core::MESSAGE_CHARS)
            );
            ExitCode::FAILURE
        }
    }
}
