//! JuDGE's legal lexicon, read from the checkout: the charge names and the keyword tables that
//! upstream's `crime_extraction.py` normalises an extracted charge with. They are data the
//! project may not copy, so the legal metrics take them from here, checked against the known
//! commit's hashes like the prompts.

use crate::catalog::{LexiconRow, JUDGE_LEXICON, JUDGE_LEXICON_FILE, KNOWN_COMMIT};
use crate::checkout::{read_source, sha256_prefix};
use crate::error::{Mismatch, UpstreamError};
use crate::lexicon::{JudgeLexicon, KeywordCharges};
use crate::python::{str_list_dict, string_runs, strip, Binding, Literal, Piece, StrListEntry};
use crate::Upstream;

impl Upstream {
    /// JuDGE's lexicon from `src/dataset/judge/crime_extraction.py`, read the first time it is
    /// asked for and checked against the known commit (a changed lexicon is reported, never
    /// used).
    pub fn judge_lexicon(&self) -> Result<&JudgeLexicon, UpstreamError> {
        if let Some(lexicon) = self.judge_lexicon.get() {
            return Ok(lexicon);
        }
        let read = read_lexicon(&read_source(self.dir(), JUDGE_LEXICON_FILE)?)?;
        Ok(self.judge_lexicon.get_or_init(|| read))
    }
}

/// The lexicon in `source`, or every row that differs from the known version.
fn read_lexicon(source: &str) -> Result<JudgeLexicon, UpstreamError> {
    let [names_row, keywords_row, rare_row] = JUDGE_LEXICON;
    let mut mismatches = Vec::new();
    let mut note = |row: &LexiconRow, problem: String| {
        mismatches.push(Mismatch {
            prompt: row.name,
            file: JUDGE_LEXICON_FILE,
            scope: "module level".to_string(),
            problem,
        })
    };
    let charges = match charge_names(source, &names_row) {
        Ok(names) => names,
        Err(problem) => {
            note(&names_row, problem);
            Vec::new()
        }
    };
    let mut tables = Vec::new();
    for row in [keywords_row, rare_row] {
        match keyword_table(source, &row) {
            Ok(table) => tables.push(table),
            Err(problem) => {
                note(&row, problem);
                tables.push(Vec::new());
            }
        }
    }
    if !mismatches.is_empty() {
        return Err(UpstreamError::Changed(mismatches));
    }
    let rare_keywords = tables.pop().unwrap_or_default();
    let keywords = tables.pop().unwrap_or_default();
    Ok(JudgeLexicon {
        charges,
        keywords,
        rare_keywords,
    })
}

/// The charge names of the string assigned to `row.name`.
fn charge_names(source: &str, row: &LexiconRow) -> Result<Vec<String>, String> {
    let runs = string_runs(source).map_err(|e| format!("the file cannot be scanned: {e}"))?;
    let run = runs
        .iter()
        .find(|run| run.scope.is_empty() && run.binding == Binding::Assigned(row.name.into()))
        .ok_or_else(|| format!("no string assigned to {}", row.name))?;
    let written: String = run.literals.iter().map(|l| l.source.as_str()).collect();
    check(row, &written, run.line)?;
    let text = run
        .literals
        .iter()
        .map(value)
        .collect::<Result<String, String>>()?;
    let mut names: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let name = strip(line).to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// The dictionary of string lists assigned to `row.name`.
fn keyword_table(source: &str, row: &LexiconRow) -> Result<Vec<KeywordCharges>, String> {
    let entries = str_list_dict(source, row.name)
        .map_err(|e| format!("the dictionary cannot be read: {e}"))?
        .ok_or_else(|| format!("no dictionary of lists assigned to {}", row.name))?;
    let written: String = entries.iter().map(entry_source).collect();
    check(row, &written, 0)?;
    entries
        .iter()
        .map(|entry| {
            let items = entry.items.iter().map(value).collect::<Result<_, _>>()?;
            Ok((value(&entry.key)?, items))
        })
        .collect()
}

/// How an entry counts in its dictionary's hash: `key:item,item,…` and a newline.
fn entry_source(entry: &StrListEntry) -> String {
    let items: Vec<&str> = entry.items.iter().map(|l| l.source.as_str()).collect();
    format!("{}:{}\n", entry.key.source, items.join(","))
}

/// Whether `written` is the known version's text of `row`.
fn check(row: &LexiconRow, written: &str, line: usize) -> Result<(), String> {
    let found = sha256_prefix(written);
    if found == row.sha256 {
        return Ok(());
    }
    let place = if line > 0 {
        format!("the text at line {line}")
    } else {
        "the text".to_string()
    };
    Err(format!(
        "{place} differs from {} (sha256 {found}, known {})",
        &KNOWN_COMMIT[..12],
        row.sha256
    ))
}

/// A plain literal's value.
fn value(literal: &Literal) -> Result<String, String> {
    let pieces = literal.pieces(false, &mut 0).map_err(|e| e.to_string())?;
    Ok(pieces
        .into_iter()
        .map(|piece| match piece {
            Piece::Text(text) => text,
            Piece::Field { key, .. } => key,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_lexicon_is_refused_by_name() {
        let source = "crime_name = \"\"\"甲罪\n乙罪\"\"\"\nreplace_dict = {'甲': ['甲罪']}\n";
        let Err(UpstreamError::Changed(mismatches)) = read_lexicon(source) else {
            panic!("a lexicon with other words was accepted");
        };
        let names: Vec<&str> = mismatches.iter().map(|m| m.prompt).collect();
        assert_eq!(names, ["crime_name", "replace_dict", "replace_dict_rare"]);
        assert!(mismatches[2].problem.contains("no dictionary"));
    }
}
