//! `summarize`: recomputes an existing run's summary from its evaluation details.

use mb_datasets::results::RunFiles;

use super::evaluate::{previous_timing, run_datasets, RunDirArgs};
use crate::error::HarnessError;
use crate::run::evaluation::summarize;

/// `summarize`: recomputes the run's summary from its `evaluate_details.json`.
pub fn run(args: &RunDirArgs) -> Result<(), HarnessError> {
    let files = RunFiles::new(&args.run);
    let (kind, set_name, datasets) = run_datasets(args, &files)?;
    let details = files.read_details()?;
    let timing = previous_timing(&files);
    let summary = summarize(&files, kind, &set_name, &datasets, &details, timing)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&summary["summary"]).unwrap_or_default()
    );
    Ok(())
}
