//! `report`: one self-contained HTML page comparing the runs under result directories.
//!
//! Every directory holding a `summary.json` is a run (a step of `stepwise-off-policy` or
//! `on-policy` counts as its own run); its regime, set, memory system and settings come from
//! its path and `run_config.json`, and the number of cases it answered from its own
//! predictions. Runs are compared only with comparable runs (see `groups`): the same regime,
//! set, answer model, `--limit`, `--retrieve-k`, prompts' wording, data, memory embedder (a
//! system without one fits any) and number of cases. Within such a group the newest run of
//! each system is kept; a trial on four cases with another model is a group of its own, never
//! a replacement for a full run.
//!
//! The page starts with a table of contents linking to one section per group. A section's
//! heading names the group (`off-policy — domain/Sample — llm offline, 10 cases`), a line
//! below it the rest of what its runs share; then its table of scores, costs and fallbacks
//! (model output so unusable that upstream's fallback replaced it; shown in red, so a model
//! returning garbage does not pass for one finding nothing), and SVG charts: the score of each
//! system, memory processing against prediction time per case (the paper's efficiency
//! figure), LLM operations per case, model tokens per case (when a model was called), and the
//! memorization's cumulative time over the training dialogs (from `memorization.json`). A group
//! of stepwise or on-policy runs shows each system's score after every step (the learning
//! curve) and then those charts per step, folded but the last. It needs no network to open.
//! The charts keep every label apart (see `labels`): bars run across, one row per system; the
//! scatter places each name beside its point; line charts have their legend beside the plot.
//!
//! `report_body` gives the page without its frame, for a server to embed: it has no inline
//! style, only classes, whose rules are `report.css`, inline here and an asset of `serve`.

mod charts;
mod groups;
mod html;
mod key;
mod labels;
mod lines;
mod runs;
mod scatter;

pub(crate) use groups::step_order;
pub(crate) use lines::loss_chart;
#[cfg(test)]
mod comparable_tests;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::error::HarnessError;
use crate::stdout::line;

/// Arguments of `report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result directories to collect runs from.
    #[arg(default_value = "runs")]
    dirs: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, default_value = "runs/report.html")]
    out: PathBuf,
}

/// The rules of the classes the report's HTML uses (`report.css`, which `serve` serves to its
/// own page too), inline in the page `report` writes, after the page's own.
pub(crate) const STYLE: &str = include_str!("report.css");

/// Runs `report`.
pub fn run(args: &ReportArgs) -> Result<(), HarnessError> {
    let Some(report) = build(&args.dirs)? else {
        return Err(HarnessError::Usage(format!(
            "no runs (directories with summary.json) under {}",
            args.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let html = page(&report.body);
    if let Some(parent) = args.out.parent() {
        std::fs::create_dir_all(parent).map_err(|e| crate::error::file_error(parent, e))?;
    }
    mb_core::atomic_file::write_atomic(&args.out, html.as_bytes())
        .map_err(|e| crate::error::file_error(&args.out, e))?;
    line(format_args!(
        "{}; {} of comparable runs; report written to {}",
        counted(report.runs, "run", "runs"),
        counted(report.groups, "group", "groups"),
        args.out.display()
    ))?;
    Ok(())
}

/// `n` with its noun in the right number: "1 run", "2 runs".
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The report of the runs under `dirs` as an HTML fragment (a table of contents and a section
/// per group of comparable runs; no `<html>`, `<head>` or inline style, its classes' rules
/// in [`STYLE`]), for `report`'s page and for a server that embeds it in one of its own;
/// `None` when there are no runs under `dirs`.
pub(crate) fn report_body(dirs: &[PathBuf]) -> Result<Option<String>, HarnessError> {
    Ok(build(dirs)?.map(|report| report.body))
}

/// A report's body and what it holds.
struct Report {
    /// The HTML fragment.
    body: String,
    /// How many runs (steps counted apart) it shows.
    runs: usize,
    /// How many groups of comparable runs.
    groups: usize,
}

/// The report of the runs under `dirs`; `None` when there are none.
fn build(dirs: &[PathBuf]) -> Result<Option<Report>, HarnessError> {
    let found = runs::collect_all(dirs)?;
    let groups = groups::groups(&found);
    if groups.is_empty() {
        return Ok(None);
    }
    let body =
        html::body(&groups).map_err(|e| HarnessError::Usage(format!("drawing the charts: {e}")))?;
    // A run without a memory embedder may be shown in several groups; it is one run.
    let shown: HashSet<&Path> = groups
        .iter()
        .flat_map(|g| g.rows.iter().map(|r| r.dir.as_path()))
        .collect();
    Ok(Some(Report {
        body,
        runs: shown.len(),
        groups: groups.len(),
    }))
}

/// The HTML page around a report's `body`, its style inline.
fn page(body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>memorybench-rs report</title>\
         <style>body{{font-family:sans-serif;margin:2em}}\n{STYLE}</style></head><body>\
         <h1>memorybench-rs report</h1><div class=\"report\">{body}</div></body></html>\n"
    )
}
