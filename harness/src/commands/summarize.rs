//! `summarize`: recomputes an existing run's summary from its evaluation details.

use mb_eval::RunFiles;

use super::evaluate::{rewrite_summary, run_datasets, RunDirArgs};
use crate::error::HarnessError;

/// `summarize`: recomputes the run's summary from its `evaluate_details.json`.
pub fn run(args: &RunDirArgs) -> Result<(), HarnessError> {
    let files = RunFiles::new(&args.run);
    // A summary reads scores and ids, never a prompt: the paraphrase's rows serve.
    let (kind, set_name, datasets) = run_datasets(args, &files, None)?;
    let details = files.read_details()?;
    rewrite_summary(&files, kind, &set_name, &datasets, &details)
}
