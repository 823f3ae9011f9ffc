//! LoCoMo's raw file (`locomo10.json`) into rows: one dataset per conversation, one row per
//! QA item, its question framed as upstream's loader framed it, in the words a
//! [`LocomoWords`] gives: the project's paraphrase, or upstream's own read from its checkout.

use serde_json::{json, Value};

use mb_upstream::python::ascii_string;
use mb_upstream::{Prompt, Upstream};

use super::{fail, raw_row, split_rows, ImportError};
use crate::source::StoredDataset;
use crate::table::RawRow;

/// The words of LoCoMo's question prompts. Each returns the text, or why it cannot be had.
pub trait LocomoWords {
    /// What opens every question: the conversation above is between speakers `a` and `b`.
    fn preamble(&self, a: &str, b: &str) -> Result<String, String>;
    /// The frame of a question to answer with a short phrase.
    fn question(&self, question: &str) -> Result<String, String>;
    /// A temporal (category 2) question, asking for an approximate date.
    fn dated(&self, question: &str) -> Result<String, String>;
    /// The frame of an adversarial (category 5) question with its options `first`, `second`.
    fn adversarial(&self, question: &str, first: &str, second: &str) -> Result<String, String>;
}

/// The project's own words (runs record them as paraphrased).
pub struct Paraphrase;

impl LocomoWords for Paraphrase {
    fn preamble(&self, a: &str, b: &str) -> Result<String, String> {
        Ok(format!(
            "The conversation above is between {a} and {b}. It spans several days, and each \
             session opens with the date on which it took place.\n\n"
        ))
    }

    fn question(&self, question: &str) -> Result<String, String> {
        Ok(format!(
            "\nUsing the conversation above, answer the question with a short phrase, reusing \
             the conversation's own words where you can.\n\nQuestion: {question} Short answer:\n"
        ))
    }

    fn dated(&self, question: &str) -> Result<String, String> {
        Ok(format!(
            "{question} Give an approximate date, worked out from the DATE of each conversation."
        ))
    }

    fn adversarial(&self, question: &str, first: &str, second: &str) -> Result<String, String> {
        Ok(format!(
            "\nUsing the conversation above, answer this question.\n\nQuestion: {question} Pick \
             one answer: (a) {first} (b) {second}.  Short answer:\n"
        ))
    }
}

/// Upstream's words: its module's templates, and the two phrases its (now commented-out)
/// loader added to questions.
impl LocomoWords for Upstream {
    fn preamble(&self, a: &str, b: &str) -> Result<String, String> {
        render(self, Prompt::LocomoPreamble, &[("0", a), ("1", b)])
    }

    fn question(&self, question: &str) -> Result<String, String> {
        render(self, Prompt::LocomoQuestion, &[("0", question)])
    }

    fn dated(&self, question: &str) -> Result<String, String> {
        let suffix = render(self, Prompt::LocomoDatedSuffix, &[])?;
        Ok(format!("{question}{suffix}"))
    }

    fn adversarial(&self, question: &str, first: &str, second: &str) -> Result<String, String> {
        let options = render(
            self,
            Prompt::LocomoAdversarialOptions,
            &[("0", first), ("1", second)],
        )?;
        render(
            self,
            Prompt::LocomoAdversarialQuestion,
            &[("0", &format!("{question}{options}"))],
        )
    }
}

fn render(upstream: &Upstream, prompt: Prompt, values: &[(&str, &str)]) -> Result<String, String> {
    upstream.render(prompt, values).map_err(|e| e.to_string())
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
    words: &dyn LocomoWords,
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
                words,
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
    words: &dyn LocomoWords,
) -> Result<RawRow, String> {
    let question = item["question"].as_str().ok_or("no question")?;
    let category = item["category"].as_u64().ok_or("no category")?;
    let preamble = words.preamble(a, b)?;
    // `golden` is JSON text: the options' dict, or the answer as a string.
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
            (words.adversarial(question, first, second)?, golden)
        }
        _ => {
            let question = if category == 2 {
                words.dated(question)?
            } else {
                question.to_string()
            };
            let golden = match item.get("answer") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(other) => other.to_string(),
                None => return Err(format!("category {category} without answer")),
            };
            let golden = Value::String(golden).to_string();
            (words.question(&question)?, golden)
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
    // The info column as upstream's loader stored it: an adversarial question's options as a
    // dict in the order written (the abstaining option first), every other answer as text.
    let info = format!(
        "{{\"golden_answer\": {golden}, \"category\": {category}, \"evidence\": {}}}",
        Value::Array(evidence)
    );
    Ok(raw_row(json!({
        "test_idx": index,
        "origin_question": question,
        "input_prompt": format!("{preamble}{prompt}"),
        "dataset_name": dataset,
        "lang": "en",
        "info": info,
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
        .map(|(k, v)| format!("{}: {}", ascii_string(k), ascii_string(v)))
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// What upstream's loader (`convert_str_to_obj`) makes of a LoCoMo row's golden answer: the
/// `json.dumps` text of an adversarial question's options (keys in the order upstream wrote
/// them, the abstaining option first; `a` before `b` when neither abstains), `str()` of any
/// other answer. A golden answer already text is kept (rows that stored the dumped text).
pub(crate) fn convert_golden_answer(info: &mut serde_json::Map<String, Value>) {
    let adversarial = info.get("category").and_then(Value::as_u64) == Some(5);
    let Some(golden) = info.get_mut("golden_answer") else {
        return;
    };
    let text = match &*golden {
        Value::String(_) => return,
        Value::Object(options) if adversarial => {
            let mut keys: Vec<&String> = options.keys().collect();
            keys.sort_by_key(|k| options[k.as_str()].as_str() != Some(NOT_MENTIONED));
            let entries: Vec<String> = keys
                .into_iter()
                .map(|k| match &options[k.as_str()] {
                    Value::String(v) => format!("{}: {}", ascii_string(k), ascii_string(v)),
                    other => format!("{}: {other}", ascii_string(k)),
                })
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        other => mb_upstream::python::repr_json(other),
    };
    *golden = Value::String(text);
}
