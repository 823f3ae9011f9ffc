//! `train-performance`: as `off-policy` (see [`super::off_policy`]), but asking the training
//! questions whose dialogs are in memory.

use super::off_policy::{run_questions, Questions};
use crate::error::HarnessError;
pub use crate::run::RunArgs;

/// Runs `train-performance`.
pub fn run(args: &RunArgs) -> Result<(), HarnessError> {
    run_questions(args, Questions::Train)
}
