//! Importers from upstream's raw files, for users without the Hugging Face copy and for
//! offline tests.
//!
//! Each importer builds the rows upstream's raw loaders built (same `test_idx` numbering,
//! fields and `info`), with prompt wording of our own (LoCoMo's also in upstream's, see
//! [`LocomoWords`]), and splits them with upstream's seeded
//! procedure ([`crate::split`]). Rows are stored as the Hugging Face copy stores them (dict and
//! list columns as JSON strings), so an import written out with
//! [`crate::InMemorySource::write_hf_layout`] reads back exactly like the published data.
//!
//! Deliberate differences: LoCoMo's preamble names the speakers as `speaker_a` and
//! `speaker_b` (upstream takes them from a Python set, so their order varies between runs),
//! and HelloBench's per-domain split visits domains in file order (upstream iterates a set:
//! the same rows end up in each split, in a different order).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::source::StoredDataset;
use crate::split::{test_ids, test_ids_by_group};
use crate::table::RawRow;

mod locomo;

pub(crate) use locomo::convert_golden_answer;
pub use locomo::{locomo, LocomoWords, Paraphrase, NOT_MENTIONED};

/// A raw file that cannot be imported.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: {detail}")]
#[non_exhaustive]
pub struct ImportError {
    /// The file (or file and record).
    pub origin: String,
    /// What is wrong.
    pub detail: String,
}

pub(crate) fn fail(origin: &str, detail: impl Into<String>) -> ImportError {
    ImportError {
        origin: origin.to_string(),
        detail: detail.into(),
    }
}

/// NFCats (`test.csv`: `annotated_by, category, question`): one row per question, split with
/// `truncate` (upstream: 250).
pub fn nfcats(
    csv_text: &str,
    origin: &str,
    truncate: Option<usize>,
) -> Result<StoredDataset, ImportError> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| fail(origin, e.to_string()))?
        .clone();
    let column = headers
        .iter()
        .position(|h| h == "question")
        .ok_or_else(|| fail(origin, "no question column"))?;
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| fail(origin, format!("record {}: {e}", i + 1)))?;
        let question = record
            .get(column)
            .ok_or_else(|| fail(origin, format!("record {}: no question", i + 1)))?;
        rows.push(raw_row(json!({
            "test_idx": i,
            "input_prompt": format!(
                "Answer the following non-factoid question in English. Be concise and \
                 informative, and use no more than 200 words.\n\nQuestion: {question}"
            ),
            "dataset_name": "NFCats",
            "lang": "en",
            "info": "{}",
        })));
    }
    Ok(split_rows(rows, truncate, None))
}

/// LexEval (JSON lines `{instruction, input, answer}`): prompt = instruction + input, the
/// answer as golden answer; `dataset` is `LexEval-QA`, `LexEval-Judge` or
/// `LexEval-Summarization`.
pub fn lexeval(
    text: &str,
    origin: &str,
    dataset: &str,
    truncate: Option<usize>,
) -> Result<StoredDataset, ImportError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let item: Value = serde_json::from_str(line)
            .map_err(|e| fail(origin, format!("record {}: {e}", i + 1)))?;
        let field = |name: &str| {
            item[name]
                .as_str()
                .ok_or_else(|| fail(origin, format!("record {}: no {name}", i + 1)))
        };
        rows.push(raw_row(json!({
            "test_idx": i,
            "input_prompt": format!("{}{}", field("instruction")?, field("input")?),
            "dataset_name": dataset,
            "lang": "zh",
            "info": json!({"golden_answer": field("answer")?}).to_string(),
        })));
    }
    Ok(split_rows(rows, truncate, None))
}

/// HelloBench's category files in upstream's reading order.
pub const HELLOBENCH_FILES: [&str; 5] = [
    "open_ended_qa",
    "summarization",
    "chat",
    "heuristic_text_generation",
    "text_completion",
];

/// Whether a HelloBench item (file, category) belongs to `dataset`.
pub fn hellobench_member(dataset: &str, file: &str, category: &str) -> Result<bool, String> {
    Ok(match dataset {
        "HelloBench-Academic&Knowledge-QA" => {
            file == "open_ended_qa" || (file == "chat" && category == "science_problem_solve")
        }
        "HelloBench-Academic&Knowledge-Writing" => matches!(
            (file, category),
            ("summarization", "academic_article")
                | ("chat", "academic_write")
                | (
                    "heuristic_text_generation",
                    "argumentative_writing" | "keyword_writing"
                )
        ),
        "HelloBench-Creative&Design" => match file {
            "chat" => matches!(
                category,
                "curriculum_development"
                    | "character_creation"
                    | "idea_generation"
                    | "creative_write"
                    | "script_write"
                    | "continue_write"
                    | "guide_generation"
            ),
            "heuristic_text_generation" => {
                matches!(
                    category,
                    "roleplaying_writing" | "screenplay_writing" | "story_writing"
                )
            }
            "text_completion" => true,
            _ => false,
        },
        other => return Err(format!("{other} is not a HelloBench dataset")),
    })
}

/// HelloBench: `files` maps a category file's stem to its JSON-lines text (absent files are
/// skipped, as `summarization` is in the public snapshot); rows of `dataset` are numbered in
/// reading order and split 20% per file (upstream ignores the sample count here).
pub fn hellobench(
    files: &BTreeMap<String, String>,
    dataset: &str,
) -> Result<StoredDataset, ImportError> {
    let mut rows = Vec::new();
    let mut groups = Vec::new();
    for file in HELLOBENCH_FILES {
        let Some(text) = files.get(file) else {
            continue;
        };
        let origin = format!("{file}.jsonl");
        for (line_number, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let item: Value = serde_json::from_str(line)
                .map_err(|e| fail(&origin, format!("line {}: {e}", line_number + 1)))?;
            let text_field = |name: &str| {
                item[name]
                    .as_str()
                    .ok_or_else(|| fail(&origin, format!("line {}: no {name}", line_number + 1)))
            };
            if !hellobench_member(dataset, file, text_field("category")?)
                .map_err(|e| fail(&origin, e))?
            {
                continue;
            }
            let checklist: Value = serde_json::from_str(text_field("formatted_checklists")?)
                .map_err(|e| {
                    fail(
                        &origin,
                        format!("line {}: formatted_checklists: {e}", line_number + 1),
                    )
                })?;
            groups.push(file);
            rows.push(raw_row(json!({
                "test_idx": rows.len(),
                "id": item["id"],
                "category": item["category"],
                "input_prompt": text_field("instruction")?,
                "dataset_name": dataset,
                "domain": file,
                "lang": "en",
                "info": json!({"checklist": checklist}).to_string(),
            })));
        }
    }
    let ids: Vec<(u64, &str)> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (i as u64, *g))
        .collect();
    let split = test_ids_by_group(&ids);
    Ok(assign(rows, &split.train, &split.test, None))
}

/// Splits rows numbered `0..n` in order by upstream's procedure.
pub(crate) fn split_rows(
    rows: Vec<RawRow>,
    truncate: Option<usize>,
    corpus: Option<String>,
) -> StoredDataset {
    let ids: Vec<u64> = (0..rows.len() as u64).collect();
    let split = test_ids(&ids, truncate);
    assign(rows, &split.train, &split.test, corpus)
}

fn assign(rows: Vec<RawRow>, train: &[u64], test: &[u64], corpus: Option<String>) -> StoredDataset {
    let pick = |ids: &[u64]| {
        ids.iter()
            .filter_map(|&i| rows.get(i as usize).cloned())
            .collect()
    };
    StoredDataset {
        train: pick(train),
        test: pick(test),
        corpus,
    }
}

pub(crate) fn raw_row(value: Value) -> RawRow {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
