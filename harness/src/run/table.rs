//! The table a run ends with: a row per memory system (and step), the result directories, and
//! whose words the prompts were in.

use std::io::Write;

use crate::run::cases::Outcome;

/// The per-system table a run ends with.
pub fn print_table(rows: &[Outcome]) {
    let _ = std::io::stdout().lock().write_all(table(rows).as_bytes());
}

/// The step a row is (its result directory's name, `begin`, `[0,100)`, `step_0`, …), for runs
/// that answer at several steps; `None` for a run's own directory.
fn step_of(row: &Outcome) -> Option<String> {
    let name = row.dir.file_name()?.to_str()?;
    (!name.starts_with("start_at_")).then(|| name.to_string())
}

/// [`print_table`]'s text: a row per system (and step, in a column of its own when the run
/// has steps), the result directories, and whose words the prompts were in.
fn table(rows: &[Outcome]) -> String {
    use std::fmt::Write as _;
    let width = rows
        .iter()
        .map(|row| row.system.len() + 2)
        .chain([18])
        .max()
        .unwrap_or(18);
    let steps: Vec<Option<String>> = rows.iter().map(step_of).collect();
    let step_width = steps
        .iter()
        .flatten()
        .map(|s| s.len() + 2)
        .max()
        .map(|w| w.max(6));
    let mut out = String::new();
    let _ = write!(out, "{:<width$}", "baseline");
    if let Some(w) = step_width {
        let _ = write!(out, "{:<w$}", "step");
    }
    let _ = writeln!(
        out,
        "{:>7}{:>8}{:>15}{:>15}{:>14}{:>12}{:>11}{:>10}{:>11}{:>9}",
        "cases",
        "errors",
        "memory s/case",
        "corpus s/case",
        "retrieval ms",
        "llm s/case",
        "llm calls",
        "tokens",
        "fallbacks",
        "score"
    );
    for (row, step) in rows.iter().zip(&steps) {
        let _ = write!(out, "{:<width$}", row.system);
        if let Some(w) = step_width {
            let _ = write!(out, "{:<w$}", step.as_deref().unwrap_or("-"));
        }
        let _ = writeln!(
            out,
            "{:>7}{:>8}{:>15.4}{:>15.4}{:>14.3}{:>12.4}{:>11.2}{:>10.0}{:>11.0}{:>9}",
            row.cases,
            row.answer_errors,
            row.timing.memory_dialogs,
            row.timing.memory_corpus,
            row.timing.predict_memory * 1000.0,
            row.timing.predict_llm,
            row.timing.llm_calls(),
            row.timing.tokens(),
            row.fallbacks(),
            row.score.map_or("-".to_string(), |s| format!("{s:.4}")),
        );
    }
    for row in rows {
        let _ = writeln!(out, "{}: {}", row.system, row.dir.display());
    }
    let mut prompts: Vec<&str> = rows.iter().map(|row| row.prompts.as_str()).collect();
    prompts.dedup();
    for wording in prompts {
        let _ = writeln!(out, "prompts: {wording}");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::run::cost::CaseTiming;

    fn row(system: &'static str, dir: &str) -> Outcome {
        Outcome {
            system,
            dir: PathBuf::from(dir),
            cases: 10,
            timing: CaseTiming::default(),
            score: Some(0.5),
            answer_errors: 0,
            prompts: "paraphrased".into(),
        }
    }

    #[test]
    fn steps_get_a_column_and_long_names_keep_the_columns_aligned() {
        let plain = table(&[row("bm25_message", "r/bm25_message/start_at_1")]);
        assert!(!plain.lines().next().unwrap().contains("step"), "{plain}");
        let stepped = table(&[
            row("bm25_message", "r/bm25_message/start_at_1/step_0"),
            row("bm25_message", "r/bm25_message/start_at_1/step_1"),
        ]);
        let lines: Vec<&str> = stepped.lines().collect();
        assert!(
            lines[0].starts_with("baseline") && lines[0].contains("step"),
            "{stepped}"
        );
        assert!(
            lines[1].contains("step_0") && lines[2].contains("step_1"),
            "{stepped}"
        );
        let long = table(&[
            row("py:keyword_memory:KeywordMemory", "r/a/start_at_1"),
            row("bm25_message", "r/b/start_at_1"),
        ]);
        let lines: Vec<&str> = long.lines().collect();
        let column = |line: &str| line.find("10").unwrap();
        assert_eq!(column(lines[1]), column(lines[2]), "{long}");
        assert_eq!(
            lines[0].find("cases").unwrap() + 3,
            column(lines[1]),
            "{long}"
        );
    }
}
