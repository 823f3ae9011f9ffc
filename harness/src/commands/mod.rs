//! One module per subcommand of `mb-harness`, each with its arguments and a
//! `run(&Args) -> Result<(), HarnessError>` entry point.
//!
//! The regimes ([`off_policy`], [`train_performance`], [`stepwise`], [`on_policy`]) and
//! upstream's other experiments ([`action_feedback`], [`feedback_usefulness`], the SFT
//! baseline's prediction in [`sft`]) are driven by the shared plumbing of `crate::run`;
//! [`longmemeval`] is `off-policy --longmemeval FILE`.

pub mod action_feedback;
pub mod evaluate;
pub mod feedback_usefulness;
pub mod generate_dialogs;
pub mod import;
pub mod list;
pub mod longmemeval;
pub mod off_policy;
pub mod on_policy;
pub mod plan;
pub(crate) mod regimes;
pub mod report;
pub mod retrieve;
pub mod serve;
pub mod sft;
pub mod stepwise;
pub mod summarize;
pub mod sweep;
pub mod train_performance;
