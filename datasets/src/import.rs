//! Importers from upstream's raw files, for users without the Hugging Face copy and for
//! offline tests.
//!
//! Each importer builds the rows upstream's raw loaders built (same `test_idx` numbering,
//! fields and `info`), with prompt wording of our own, and splits them with upstream's seeded
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

fn fail(origin: &str, detail: impl Into<String>) -> ImportError {
    ImportError {
        origin: origin.to_string(),
        detail: detail.into(),
    }
}

/// The option upstream offers against a category-5 (adversarial) question's trap answer; the
/// LoCoMo metric recognizes it by its words "not mentioned".
pub const NOT_MENTIONED: &str = "Not mentioned in the conversation";

/// LoCoMo (`locomo10.json`): one dataset per sample (`name(j)` names sample `j`), one row per
/// QA item numbered in QA order, the sample's JSON as corpus, split with `truncate`
/// (upstream: 25).
pub fn locomo(
    text: &str,
    origin: &str,
    name: impl Fn(usize) -> String,
    truncate: Option<usize>,
) -> Result<Vec<(String, StoredDataset)>, ImportError> {
    let samples: Vec<Value> = serde_json::from_str(text)
        .map_err(|e| fail(origin, format!("not a LoCoMo JSON array: {e}")))?;
    let mut datasets = Vec::new();
    for (j, sample) in samples.iter().enumerate() {
        let dataset = name(j);
        let origin = format!("{origin}, sample {j}");
        let conversation = sample
            .get("conversation")
            .ok_or_else(|| fail(&origin, "no conversation"))?;
        let speaker = |key: &str| {
            conversation[key]
                .as_str()
                .ok_or_else(|| fail(&origin, format!("conversation has no {key}")))
        };
        let (a, b) = (speaker("speaker_a")?, speaker("speaker_b")?);
        let qa = sample["qa"]
            .as_array()
            .ok_or_else(|| fail(&origin, "no qa list"))?;
        let mut rows = Vec::with_capacity(qa.len());
        let mut not_mentioned_first = true;
        for (i, item) in qa.iter().enumerate() {
            let row = locomo_row(
                &dataset,
                i,
                item,
                conversation,
                (a, b),
                &mut not_mentioned_first,
            )
            .map_err(|detail| fail(&format!("{origin}, qa {i}"), detail))?;
            rows.push(row);
        }
        let corpus = serde_json::to_string(sample).map_err(|e| fail(&origin, e.to_string()))?;
        datasets.push((dataset, split_rows(rows, truncate, Some(corpus))));
    }
    Ok(datasets)
}

fn locomo_row(
    dataset: &str,
    index: usize,
    item: &Value,
    conversation: &Value,
    (a, b): (&str, &str),
    not_mentioned_first: &mut bool,
) -> Result<RawRow, String> {
    let question = item["question"].as_str().ok_or("no question")?;
    let category = item["category"].as_u64().ok_or("no category")?;
    let preamble = format!(
        "The conversation above is between {a} and {b}. It spans several days, and each \
         session opens with the date on which it took place.\n\n"
    );
    let (prompt, golden) = match category {
        5 => {
            let trap = item["adversarial_answer"]
                .as_str()
                .ok_or("category 5 without adversarial_answer")?;
            // Upstream alternates the position of the abstaining option, starting with (a).
            let (first, second, golden) = if *not_mentioned_first {
                (
                    NOT_MENTIONED,
                    trap,
                    python_json_object(&[("a", NOT_MENTIONED), ("b", trap)]),
                )
            } else {
                (
                    trap,
                    NOT_MENTIONED,
                    python_json_object(&[("b", NOT_MENTIONED), ("a", trap)]),
                )
            };
            *not_mentioned_first = !*not_mentioned_first;
            let question = format!("{question} Pick one answer: (a) {first} (b) {second}. ");
            (
                format!("\nUsing the conversation above, answer this question.\n\nQuestion: {question} Short answer:\n"),
                golden,
            )
        }
        _ => {
            let question = if category == 2 {
                format!("{question} Give an approximate date, worked out from the DATE of each conversation.")
            } else {
                question.to_string()
            };
            let golden = match item.get("answer") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(other) => other.to_string(),
                None => return Err(format!("category {category} without answer")),
            };
            (
                format!(
                    "\nUsing the conversation above, answer the question with a short phrase, \
                     reusing the conversation's own words where you can.\n\nQuestion: {question} Short answer:\n"
                ),
                golden,
            )
        }
    };
    let evidence: Vec<Value> = item["evidence"]
        .as_array()
        .map(|ids| {
            ids.iter()
                .filter_map(Value::as_str)
                .flat_map(|id| evidence_turn(conversation, id))
                .collect()
        })
        .unwrap_or_default();
    let info = json!({"golden_answer": golden, "category": category, "evidence": evidence});
    Ok(raw_row(json!({
        "test_idx": index,
        "origin_question": question,
        "input_prompt": format!("{preamble}{prompt}"),
        "dataset_name": dataset,
        "lang": "en",
        "info": info.to_string(),
    })))
}

/// The turn a LoCoMo evidence id (`D<session>:<n>`) names, with all its keys, as upstream
/// copies it into `info.evidence`; unknown ids are skipped, as upstream does.
fn evidence_turn(conversation: &Value, id: &str) -> Option<Value> {
    let session = id.rsplit('D').next()?.split(':').next()?;
    conversation
        .get(format!("session_{session}"))?
        .as_array()?
        .iter()
        .find(|turn| turn["dia_id"].as_str() == Some(id))
        .cloned()
}

/// `json.dumps` of a dict of strings with Python's defaults (`", "`/`": "` separators, non-ASCII
/// escaped), keys in the given order.
fn python_json_object(entries: &[(&str, &str)]) -> String {
    let body: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{}: {}", python_json_string(k), python_json_string(v)))
        .collect();
    format!("{{{}}}", body.join(", "))
}

fn python_json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
fn split_rows(rows: Vec<RawRow>, truncate: Option<usize>, corpus: Option<String>) -> StoredDataset {
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

fn raw_row(value: Value) -> RawRow {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
