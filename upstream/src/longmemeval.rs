//! LongMemEval's official wording, read at run time from a LongMemEval checkout
//! (xiaowu0162/LongMemEval) the user names, as [`crate::Upstream`] reads MemoryBench's.
//!
//! A run comparable with LongMemEval's paper sends the official reading prompt, Chain-of-Note
//! note and judge word for word, and the project may not contain them. So the templates are
//! read from the checkout's `src/generation/run_generation.py` (`prepare_prompt`) and
//! `src/evaluation/evaluate_qa.py` (`get_anscheck_prompt`), each checked against its hash at
//! [`LONGMEMEVAL_COMMIT`]; a changed checkout is refused naming file and function. The methods
//! fill them as the official code does: `str.format` of the templates, the history items sorted
//! by date and numbered as sessions, each item written by `json.dumps` (ASCII-escaped, its
//! default), a note shown as `{"session_summary": note}`. The official code's history format
//! `json` is the one reproduced (its default and recommendation; `nl` cannot show Chain-of-Note
//! notes), and its token truncation of an over-long history is not (the caller fits its
//! context as it does for every prompt).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::catalog::{LongMemEvalPrompt, Prompt, LONGMEMEVAL_COMMIT, LONGMEMEVAL_ROWS};
use crate::checkout::{git_head, read_templates};
use crate::python::ascii_string;
use crate::template::Template;
use crate::UpstreamError;

/// LongMemEval's official wording, read from a checkout.
#[derive(Debug)]
pub struct LongMemEval {
    dir: PathBuf,
    head: Option<String>,
    templates: HashMap<Prompt, Template>,
}

/// How the official reader is asked to answer (`run_generation.py --cot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// `--cot false` (the `direct` reading method): the answer at once.
    Direct,
    /// `--cot true` (the `con` and `con-separate` reading methods): the relevant information
    /// extracted first, then reasoned over to the answer.
    StepByStep,
}

/// One turn of a history item, as LongMemEval's files hold it (`has_answer` left out, as the
/// official reader pops it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTurn {
    /// `user` or `assistant`.
    pub role: String,
    /// What was said.
    pub content: String,
}

/// One history item as the official reader shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk {
    /// Turns of the haystack (a retrieved session, or a round), shown as the JSON list of
    /// `{"role", "content"}` objects.
    Turns(Vec<ChatTurn>),
    /// A text standing for the item (as the official reader shows a fact that replaces the
    /// session, `--merge_key_expansion_into_value replace`): a JSON string.
    Text(String),
    /// The item's Chain-of-Note reading note, shown in the item's place as
    /// `{"session_summary": note}`.
    Note(String),
}

/// What `get_anscheck_prompt` does with a question type it does not know.
const UNKNOWN_TYPE: &str = "longmemeval.judge";

impl LongMemEval {
    /// Reads every LongMemEval template from the checkout at `dir`. Any that is missing or
    /// differs from [`LONGMEMEVAL_COMMIT`]'s is reported (all of them, by file and function);
    /// nothing is used from a checkout that does not match.
    pub fn open(dir: &Path) -> Result<LongMemEval, UpstreamError> {
        let scripts = [
            "src/generation/run_generation.py",
            "src/evaluation/evaluate_qa.py",
        ];
        if let Some(missing) = scripts.iter().find(|file| !dir.join(file).is_file()) {
            return Err(UpstreamError::NotACheckout {
                dir: dir.to_path_buf(),
                kind: "xiaowu0162/LongMemEval",
                reason: format!("it has no {missing}"),
            });
        }
        Ok(LongMemEval {
            dir: dir.to_path_buf(),
            head: git_head(dir),
            templates: read_templates(dir, LONGMEMEVAL_ROWS, LONGMEMEVAL_COMMIT)?,
        })
    }

    /// The checkout's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn template(&self, prompt: LongMemEvalPrompt) -> Result<&Template, UpstreamError> {
        self.templates
            .get(&Prompt::LongMemEval(prompt))
            .ok_or(UpstreamError::Field {
                prompt: "catalog",
                message: format!("{prompt:?} has no row in the catalog"),
            })
    }

    /// `template.format(values…)` of a template with positional fields.
    fn format(&self, prompt: LongMemEvalPrompt, values: &[&str]) -> Result<String, UpstreamError> {
        let keys: Vec<String> = (0..values.len()).map(|i| i.to_string()).collect();
        let pairs: Vec<(&str, &str)> = keys
            .iter()
            .map(String::as_str)
            .zip(values.iter().copied())
            .collect();
        self.template(prompt)?.render(&pairs)
    }

    /// The judge's prompt, as `get_anscheck_prompt(question_type, question, answer, response,
    /// abstention)` returns it: the template of the question's type (of abstention, whatever
    /// the type, for an abstention question) filled with the question, the reference (answer,
    /// rubric or explanation) and the response. A type the official code does not know is an
    /// error, as it raises there.
    pub fn judge_prompt(
        &self,
        question_type: &str,
        abstention: bool,
        question: &str,
        answer: &str,
        response: &str,
    ) -> Result<String, UpstreamError> {
        use LongMemEvalPrompt::*;
        let prompt = if abstention {
            JudgeAbstention
        } else {
            match question_type {
                "single-session-user" | "single-session-assistant" | "multi-session" => JudgeAnswer,
                "temporal-reasoning" => JudgeTemporal,
                "knowledge-update" => JudgeKnowledgeUpdate,
                "single-session-preference" => JudgePreference,
                other => {
                    return Err(UpstreamError::Field {
                        prompt: UNKNOWN_TYPE,
                        message: format!("no judge template for question type {other:?}"),
                    })
                }
            }
        };
        self.format(prompt, &[question, answer, response])
    }

    /// `json.dumps` of an item as the official reader writes it.
    fn item_json(&self, chunk: &Chunk) -> Result<String, UpstreamError> {
        Ok(match chunk {
            Chunk::Turns(turns) => {
                let objects: Vec<String> = turns
                    .iter()
                    .map(|turn| {
                        format!(
                            "{{\"role\": {}, \"content\": {}}}",
                            ascii_string(&turn.role),
                            ascii_string(&turn.content)
                        )
                    })
                    .collect();
                format!("[{}]", objects.join(", "))
            }
            Chunk::Text(text) => ascii_string(text),
            Chunk::Note(note) => {
                let key = self.template(LongMemEvalPrompt::NoteKey)?.text()?;
                format!("{{{}: {}}}", ascii_string(&key), ascii_string(note))
            }
        })
    }

    /// Chain-of-Note's request for the reading note of one item (`con_prompt` filled with the
    /// item's date, its JSON, the question's date and the question): the text of its one user
    /// message.
    pub fn note_prompt(
        &self,
        date: &str,
        chunk: &Chunk,
        question_date: &str,
        question: &str,
    ) -> Result<String, UpstreamError> {
        let item = self.item_json(chunk)?;
        self.format(
            LongMemEvalPrompt::Note,
            &[date, &item, question_date, question],
        )
    }

    /// The reading prompt, as `prepare_prompt` builds it with history format `json`: the
    /// `items` (`(date, item)`, in retrieval order) sorted by date (a stable sort, as Python's),
    /// each shown as a numbered session with its date and its JSON, then the question's date
    /// and the question, in the template of `reader`. With Chain-of-Note, the items are the
    /// notes ([`Chunk::Note`]). The text of its one user message. With no item the history is
    /// empty (the official code asserts there is one).
    pub fn reading_prompt(
        &self,
        reader: Reader,
        items: &[(String, Chunk)],
        question_date: &str,
        question: &str,
    ) -> Result<String, UpstreamError> {
        let mut sorted: Vec<&(String, Chunk)> = items.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let lead = self.template(LongMemEvalPrompt::JsonLead)?.text()?;
        let mut history = String::new();
        for (i, (date, chunk)) in sorted.iter().enumerate() {
            let content = lead.clone() + &self.item_json(chunk)?;
            history.push_str(&self.format(
                LongMemEvalPrompt::Session,
                &[&(i + 1).to_string(), date, &content],
            )?);
        }
        let template = match reader {
            Reader::Direct => LongMemEvalPrompt::ReadingDirect,
            Reader::StepByStep => LongMemEvalPrompt::ReadingStepByStep,
        };
        self.format(template, &[&history, question_date, question])
    }

    /// What a run records as its LongMemEval prompts' source: the known commit whose wording
    /// every template matched, and the checkout's own commit when git says it and it differs.
    pub fn provenance(&self) -> String {
        let known = &LONGMEMEVAL_COMMIT[..12];
        let count = self.templates.len();
        match &self.head {
            Some(head) if !head.starts_with(known) => format!(
                "official xiaowu0162/LongMemEval {known} ({count} templates identical; checkout at {})",
                &head[..head.len().min(12)]
            ),
            _ => format!("official xiaowu0162/LongMemEval {known} ({count} templates)"),
        }
    }
}
