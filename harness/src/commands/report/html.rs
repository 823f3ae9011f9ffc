//! The report's HTML: a table of contents, then one `<section>` per group of comparable runs
//! holding its heading, what else its runs share, its table, its charts and (for stepwise and
//! on-policy runs) its learning curve, each section ending in a link back to the contents.
//! The fragment carries no inline style (a page embedding it may forbid them): its looks are
//! classes, defined in [`super::STYLE`].

use std::collections::HashSet;

use super::charts::bar_chart;
use super::groups::Group;
use super::lines::{learning_chart, memorization_chart};
use super::runs::RunRow;
use super::scatter::efficiency_chart;

/// A chart that could not be drawn.
type DrawError = Box<dyn std::error::Error>;

/// The `id` of the table of contents, which every section links back to.
const TOP: &str = "report-top";

/// The report's body: the table of contents and a section per group.
pub(super) fn body(groups: &[Group]) -> Result<String, DrawError> {
    // Each section's id; a repeated one (two keys of one digest) gets a number.
    let mut taken = HashSet::new();
    let ids: Vec<String> = groups
        .iter()
        .map(|g| {
            let base = g.key.anchor();
            let mut id = base.clone();
            let mut n = 1;
            while !taken.insert(id.clone()) {
                n += 1;
                id = format!("{base}-{n}");
            }
            id
        })
        .collect();
    let mut html = format!("<nav id=\"{TOP}\" class=\"toc\"><h2>Contents</h2><ol>");
    for (group, id) in groups.iter().zip(&ids) {
        let systems: HashSet<&str> = group.rows.iter().map(|r| r.system.as_str()).collect();
        html.push_str(&format!(
            "<li><a href=\"#{}\">{}</a> <span class=\"key\">{} system{}</span></li>",
            escape(id),
            escape(&group.key.heading()),
            systems.len(),
            if systems.len() == 1 { "" } else { "s" }
        ));
    }
    html.push_str("</ol></nav>");
    for (group, id) in groups.iter().zip(&ids) {
        html.push_str(&section(group, id)?);
    }
    Ok(html)
}

/// One group's section.
fn section(group: &Group, id: &str) -> Result<String, DrawError> {
    let mut html = format!(
        "<section id=\"{}\" class=\"group\"><h2>{}</h2><p class=\"key\">{}</p>",
        escape(id),
        escape(&group.key.heading()),
        escape(&group.key.details())
    );
    html.push_str(&table(&group.rows));
    if !group.curves.is_empty() {
        html.push_str("<h3>score over the steps</h3>");
        html.push_str(&learning_chart(&group.curves)?);
    }
    // The runs' charts, a set per step (rows come by step): a run without steps directly, the
    // steps' folded but the last.
    let mut blocks: Vec<(Option<&str>, Vec<&RunRow>)> = Vec::new();
    for row in &group.rows {
        match blocks.last_mut() {
            Some((step, rows)) if *step == row.step.as_deref() => rows.push(row),
            _ => blocks.push((row.step.as_deref(), vec![row])),
        }
    }
    let last = blocks.len().saturating_sub(1);
    for (i, (step, rows)) in blocks.iter().enumerate() {
        match step {
            None => html.push_str(&charts(rows)?),
            Some(step) => html.push_str(&format!(
                "<details class=\"step\"{}><summary>step {}</summary>{}</details>",
                if i == last { " open" } else { "" },
                escape(step),
                charts(rows)?
            )),
        }
    }
    html.push_str(&format!(
        "<p><a class=\"top\" href=\"#{TOP}\">back to top</a></p></section>"
    ));
    Ok(html)
}

/// The table of a group's runs: scores, costs and fallbacks (model output so unusable that
/// upstream's fallback replaced it, marked, so that a model returning garbage does not pass
/// for one finding nothing).
fn table(rows: &[RunRow]) -> String {
    let steps = rows.iter().any(|r| r.step.is_some());
    let mut html = String::from("<table><tr><th class=\"name\">system</th>");
    if steps {
        html.push_str("<th class=\"name\">step</th>");
    }
    html.push_str("<th>score</th><th>memory s/case</th><th>prediction s/case</th><th>LLM calls/case</th><th>model tokens/case</th><th>fallbacks</th></tr>");
    for r in rows {
        html.push_str(&format!(
            "<tr><td class=\"name\">{}</td>",
            escape(&r.system)
        ));
        if steps {
            html.push_str(&format!(
                "<td class=\"name\">{}</td>",
                escape(r.step.as_deref().unwrap_or("-"))
            ));
        }
        let fallbacks = if r.fallbacks > 0.0 {
            format!("<td class=\"fallbacks-bad\">{:.0}</td>", r.fallbacks)
        } else {
            "<td>0</td>".to_string()
        };
        html.push_str(&format!(
            "<td>{}</td><td>{:.4}</td><td>{:.4}</td><td>{:.2}</td><td>{:.0}</td>{fallbacks}</tr>",
            r.score.map_or("-".into(), |s| format!("{s:.4}")),
            r.memory_seconds,
            r.prediction_seconds,
            r.llm_calls,
            r.tokens,
        ));
    }
    html.push_str("</table>");
    html
}

/// The charts of runs compared at one point (a step, or the end of off-policy runs): the score
/// of each system, its LLM operations and model tokens (when a model was called) per case,
/// memory processing against prediction time, and the memorization's cumulative time.
fn charts(rows: &[&RunRow]) -> Result<String, DrawError> {
    let per_system = |value: fn(&RunRow) -> f64| -> Vec<(String, f64)> {
        rows.iter().map(|r| (r.system.clone(), value(r))).collect()
    };
    let mut html = bar_chart("score", &per_system(|r| r.score.unwrap_or(0.0)))?;
    html.push_str(&bar_chart(
        "LLM operations per case",
        &per_system(|r| r.llm_calls),
    )?);
    if rows.iter().any(|r| r.tokens > 0.0) {
        html.push_str(&bar_chart(
            "model tokens per case",
            &per_system(|r| r.tokens),
        )?);
    }
    html.push_str(&efficiency_chart(rows)?);
    if rows.iter().any(|r| !r.dialog_seconds.is_empty()) {
        html.push_str(&memorization_chart(rows)?);
    }
    Ok(html)
}

/// `text` safe in HTML text and in a quoted attribute.
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
