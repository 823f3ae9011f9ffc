//! `report`: one self-contained HTML page comparing the runs under result directories.
//!
//! Every directory holding a `summary.json` is a run (a step of `stepwise-off-policy` or
//! `on-policy` counts as its own run); its regime, set and memory system come from its path and
//! `run_config.json`. For each (regime, set, system) the newest run is kept. The page has a
//! table of scores, costs and fallbacks (model output so unusable that upstream's fallback
//! replaced it; shown in red, so a model returning garbage does not pass for one finding
//! nothing), and SVG charts: the score of each system per set, memory
//! processing against prediction time per case (the paper's efficiency figure), LLM operations
//! per case, model tokens per case (when a model was called), and the memorization's cumulative
//! time over the training dialogs (from `memorization.json`); for stepwise and on-policy runs,
//! each system's score after every step of its newest run (the learning curve). It needs no
//! network to open. The charts keep every label apart (see `labels`): bars run across, one row
//! per system; the scatter places each name beside its point; line charts have their legend
//! beside the plot.

mod charts;
mod labels;
mod lines;
mod scatter;

pub(crate) use lines::loss_chart;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use clap::Args;
use mb_eval::read_json;
use serde_json::Value;

use crate::error::HarnessError;
use crate::run::cost::DialogCost;
use charts::bar_chart;
use lines::{learning_chart, memorization_chart};
use scatter::efficiency_chart;

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

/// One run's numbers (or one step's, for stepwise and on-policy runs).
#[derive(Debug, Clone)]
struct RunRow {
    /// The regime, with the step for a step (`step_off-policy [0,100)`).
    regime: String,
    /// The regime alone.
    base_regime: String,
    /// The step (`begin`, `[0,100)`, `step_3`), for a step of a run.
    step: Option<String>,
    /// The run directory (a step's parent).
    run_dir: PathBuf,
    set: String,
    system: String,
    dir: PathBuf,
    score: Option<f64>,
    memory_seconds: f64,
    prediction_seconds: f64,
    llm_calls: f64,
    tokens: f64,
    /// Fallbacks of the run, memory processing and prediction.
    fallbacks: f64,
    /// Seconds each training dialog took to memorize, in order (`memorization.json`).
    dialog_seconds: Vec<f64>,
    /// Whose words the run's prompts were in.
    prompts: String,
}

const REGIMES: [&str; 5] = [
    "off-policy",
    "step_off-policy",
    "on-policy",
    "train_performance",
    "action_feedback",
];

/// Runs `report`.
pub fn run(args: &ReportArgs) -> Result<(), HarnessError> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for dir in &args.dirs {
        collect(dir, &mut seen, &mut found)?;
    }
    // The newest run per (regime, set, system): run directories sort by their time stamp.
    let mut newest: BTreeMap<(String, String, String), RunRow> = BTreeMap::new();
    for row in found.iter().cloned() {
        let key = (row.regime.clone(), row.set.clone(), row.system.clone());
        if newest.get(&key).is_none_or(|old| old.dir < row.dir) {
            newest.insert(key, row);
        }
    }
    let curves = learning_curves(&found);
    let rows: Vec<RunRow> = newest.into_values().collect();
    if rows.is_empty() {
        return Err(HarnessError::Usage(format!(
            "no runs (directories with summary.json) under {}",
            args.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let html = page(&rows, &curves)
        .map_err(|e| HarnessError::Usage(format!("drawing the charts: {e}")))?;
    if let Some(parent) = args.out.parent() {
        std::fs::create_dir_all(parent).map_err(|e| crate::error::file_error(parent, e))?;
    }
    mb_datasets::durable::write_atomic(&args.out, html.as_bytes())
        .map_err(|e| crate::error::file_error(&args.out, e))?;
    println!(
        "{} runs; report written to {}",
        rows.len(),
        args.out.display()
    );
    Ok(())
}

/// Finds runs under `dir`, following symbolic links to directories once each (a link loop
/// ends where it returns to a directory already seen).
fn collect(
    dir: &Path,
    seen: &mut HashSet<PathBuf>,
    found: &mut Vec<RunRow>,
) -> Result<(), HarnessError> {
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !seen.insert(real) {
        return Ok(());
    }
    let summary = dir.join("summary.json");
    if summary.is_file() {
        if let Some(row) = read_run(dir)? {
            found.push(row);
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, seen, found)?;
        }
    }
    Ok(())
}

/// A run directory's row; `None` when it has no run configuration (not ours).
fn read_run(dir: &Path) -> Result<Option<RunRow>, HarnessError> {
    let config_dir = [dir, dir.parent().unwrap_or(dir)]
        .into_iter()
        .find(|d| d.join("run_config.json").is_file());
    let Some(config_dir) = config_dir else {
        return Ok(None);
    };
    let config: Value = read_json(&config_dir.join("run_config.json"))?;
    let summary: Value = read_json(&dir.join("summary.json"))?;
    let regime = dir
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .find(|c| REGIMES.contains(c))
        .unwrap_or("off-policy");
    // An action-feedback run is told apart by its action.
    let regime = match config["action_feedback"].as_str() {
        Some(action) => format!("{regime} {action}"),
        None => regime.to_string(),
    };
    let step = (config_dir != dir).then(|| {
        dir.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()
    });
    let text = |key: &str| config[key].as_str().unwrap_or("?").to_string();
    let score = summary["summary"]["average"].as_f64().or_else(|| {
        summary["summary"]
            .as_object()
            .and_then(|m| m.values().next())
            .and_then(Value::as_f64)
    });
    let timing = &summary["timing"];
    Ok(Some(RunRow {
        regime: match &step {
            Some(step) => format!("{regime} {step}"),
            None => regime.clone(),
        },
        base_regime: regime,
        step,
        run_dir: config_dir.to_path_buf(),
        set: format!("{}/{}", text("dataset_type"), text("set_name")),
        // An SFT run answers without memory, with the adapter of an epoch.
        system: match config["sft"]["epoch"].as_u64() {
            Some(epoch) => format!("sft epoch {epoch}"),
            None => text("memory_system"),
        },
        dir: dir.to_path_buf(),
        score,
        memory_seconds: timing["memory_processing_seconds_per_case"]
            .as_f64()
            .unwrap_or(0.0),
        prediction_seconds: timing["prediction_seconds_per_case"]
            .as_f64()
            .unwrap_or(0.0),
        llm_calls: timing["llm_calls_per_case"].as_f64().unwrap_or(0.0),
        tokens: timing["tokens_per_case"].as_f64().unwrap_or(0.0),
        fallbacks: ["memory", "prediction"]
            .iter()
            .filter_map(|part| timing["fallbacks"][part].as_f64())
            .sum(),
        dialog_seconds: dialog_seconds(dir)?,
        prompts: crate::run::cases::prompts_of(&summary),
    }))
}

/// The per-dialog memorization seconds of a run directory, if it lists them.
fn dialog_seconds(dir: &Path) -> Result<Vec<f64>, HarnessError> {
    let path = dir.join(crate::run::training::MEMORIZATION);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let dialogs: Vec<DialogCost> = read_json(&path)?;
    Ok(dialogs.iter().map(|d| d.cost.seconds).collect())
}

/// Scores over the steps of a regime on a set, per system.
type Curves = BTreeMap<(String, String), Vec<(String, Vec<(String, f64)>)>>;

/// For each (regime, set) with steps: each system's scores over the steps of its newest run.
fn learning_curves(found: &[RunRow]) -> Curves {
    let mut newest: BTreeMap<(String, String, String), &Path> = BTreeMap::new();
    for row in found.iter().filter(|r| r.step.is_some()) {
        let key = (row.base_regime.clone(), row.set.clone(), row.system.clone());
        if newest
            .get(&key)
            .is_none_or(|dir| *dir < row.run_dir.as_path())
        {
            newest.insert(key, &row.run_dir);
        }
    }
    let mut curves = Curves::new();
    for ((regime, set, system), run_dir) in newest {
        let mut steps: Vec<(i64, String, f64)> = found
            .iter()
            .filter(|r| r.run_dir == run_dir && r.system == system)
            .filter_map(|r| {
                let step = r.step.clone()?;
                Some((step_order(&step), step, r.score.unwrap_or(0.0)))
            })
            .collect();
        steps.sort_by_key(|a| a.0);
        let points = steps.into_iter().map(|(_, step, score)| (step, score));
        curves
            .entry((regime, set))
            .or_default()
            .push((system, points.collect()));
    }
    curves
}

/// Where a step comes: `begin` first, then by the first number in its name (`[100,200)`,
/// `step_3`).
fn step_order(step: &str) -> i64 {
    let digits: String = step
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(-1)
}

/// The HTML page.
fn page(rows: &[RunRow], curves: &Curves) -> Result<String, Box<dyn std::error::Error>> {
    let mut html = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>memorybench-rs report</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}svg{max-width:100%;height:auto}\
         td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,td:nth-child(2),td:nth-child(3){text-align:left}</style>\
         </head><body><h1>memorybench-rs report</h1>",
    );
    html.push_str("<table><tr><th>regime</th><th>set</th><th>system</th><th>score</th><th>memory s/case</th><th>prediction s/case</th><th>LLM calls/case</th><th>model tokens/case</th><th>fallbacks</th><th>prompts</th></tr>");
    for r in rows {
        let fallbacks = if r.fallbacks > 0.0 {
            format!(
                "<td style=\"color:#c00;font-weight:bold\">{:.0}</td>",
                r.fallbacks
            )
        } else {
            "<td>0</td>".to_string()
        };
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4}</td><td>{:.4}</td><td>{:.2}</td><td>{:.0}</td>{fallbacks}<td style=\"text-align:left\">{}</td></tr>",
            escape(&r.regime),
            escape(&r.set),
            escape(&r.system),
            r.score.map_or("-".into(), |s| format!("{s:.4}")),
            r.memory_seconds,
            r.prediction_seconds,
            r.llm_calls,
            r.tokens,
            escape(&r.prompts)
        ));
    }
    html.push_str("</table>");
    let mut groups: BTreeMap<(String, String), Vec<&RunRow>> = BTreeMap::new();
    for r in rows {
        groups
            .entry((r.regime.clone(), r.set.clone()))
            .or_default()
            .push(r);
    }
    for ((regime, set), group) in &groups {
        html.push_str(&format!("<h2>{} — {}</h2>", escape(regime), escape(set)));
        let bars: Vec<(String, f64)> = group
            .iter()
            .map(|r| (r.system.clone(), r.score.unwrap_or(0.0)))
            .collect();
        html.push_str(&bar_chart("score", &bars)?);
        let calls: Vec<(String, f64)> = group
            .iter()
            .map(|r| (r.system.clone(), r.llm_calls))
            .collect();
        html.push_str(&bar_chart("LLM operations per case", &calls)?);
        if group.iter().any(|r| r.tokens > 0.0) {
            let tokens: Vec<(String, f64)> =
                group.iter().map(|r| (r.system.clone(), r.tokens)).collect();
            html.push_str(&bar_chart("model tokens per case", &tokens)?);
        }
        html.push_str(&efficiency_chart(group)?);
        if group.iter().any(|r| !r.dialog_seconds.is_empty()) {
            html.push_str(&memorization_chart(group)?);
        }
    }
    for ((regime, set), series) in curves {
        html.push_str(&format!(
            "<h2>{} — {}: score over the steps</h2>",
            escape(regime),
            escape(set)
        ));
        html.push_str(&learning_chart(series)?);
    }
    html.push_str("</body></html>\n");
    Ok(html)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
