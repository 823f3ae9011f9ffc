//! `action-feedback --action like|copy`: upstream's action-feedback experiment
//! (`src/action_feedback/predict_with_implicit_feedback.py`, swept by
//! `run_scripts/action_feedback.py`), the off-policy regime of [`super::off_policy`] with a
//! memory that learns only the training dialogs whose implicit feedback holds the action.
//!
//! A dialog is kept when any round's feedback lists the action (the published data's
//! `implicit_actions` list; the generator's `implicit_action` is read too), from the system's
//! dialog column (`dialog`, or `dialog_<stem>` on corpus datasets); the kept dialogs are then
//! shuffled as upstream's (`random.seed(42)`). The memory is cached per action
//! (`action_feedback/<type>/<set>/<system>/<action>` in the store, as upstream's
//! `action_feedback/memory_cache/.../<action>`), results go to
//! `action_feedback/results/<type>/<set>/<system>/<action>/start_at_<stamp>/`, and every test
//! set is answered on that memory alone: upstream answers a corpus dataset without adding its
//! conversation (its sweep has none). Timing, `--resume`, the summary and the report work as
//! for `off-policy`.

use clap::ValueEnum;
use mb_baselines::SystemSpec;
use mb_datasets::row::Action;

use super::off_policy::{run_system, Learned, Questions};
use crate::error::HarnessError;
use crate::run::cases::Outcome;
use crate::run::regime::{run_regime, Regime};
use crate::run::{RunArgs, RunSetup};

/// The implicit action a run's memory learns from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImplicitAction {
    /// The user liked the answer.
    Like,
    /// The user copied the answer.
    Copy,
}

impl ImplicitAction {
    /// The action in the data.
    pub fn action(self) -> Action {
        match self {
            ImplicitAction::Like => Action::Like,
            ImplicitAction::Copy => Action::Copy,
        }
    }

    /// Upstream's name of it.
    pub fn name(self) -> &'static str {
        match self {
            ImplicitAction::Like => "like",
            ImplicitAction::Copy => "copy",
        }
    }

    /// The dialogs a memory learns with it.
    fn learned(self) -> Learned<'static> {
        Learned::WithAction(self.action(), self.name())
    }
}

/// Arguments of `action-feedback`.
#[derive(clap::Args, Debug)]
pub struct ActionFeedbackArgs {
    /// The flags every regime takes.
    #[command(flatten)]
    pub run: RunArgs,
    /// The action whose dialogs the memory learns (upstream's `--action_feedback`).
    #[arg(long, alias = "action_feedback", value_enum)]
    pub action: ImplicitAction,
}

/// Runs `action-feedback`.
pub fn run(args: &ActionFeedbackArgs) -> Result<(), HarnessError> {
    run_regime(&ActionFeedback { args })
}

struct ActionFeedback<'a> {
    args: &'a ActionFeedbackArgs,
}

impl Regime for ActionFeedback<'_> {
    // Upstream accepts `wo_memory`, whose memory learns nothing.
    const ACCEPTS_MEMORYLESS: bool = true;

    fn run_args(&self) -> &RunArgs {
        &self.args.run
    }

    async fn run_system(
        &self,
        setup: &RunSetup,
        spec: &'static SystemSpec,
    ) -> Result<Vec<Outcome>, HarnessError> {
        let learned = self.args.action.learned();
        Ok(vec![
            run_system(&self.args.run, Questions::Test, learned, setup, spec).await?,
        ])
    }
}
