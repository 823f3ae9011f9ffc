//! LongMemEval's released files (`longmemeval_s_cleaned.json`, `longmemeval_m_cleaned.json`,
//! `longmemeval_oracle.json`, and the original non-cleaned names): one JSON array of instances,
//! read one instance at a time so that the 2.75 GB M file parses in the memory of one instance.

use std::fmt;
use std::io::Read;
use std::path::Path;

use mb_core::dates::Day;
use mb_core::Role;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What a LongMemEval file got wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LongMemEvalError {
    /// The file cannot be read.
    #[error("{path}: {detail}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        detail: String,
    },
    /// The file is not a JSON array of objects.
    #[error("not a LongMemEval file (a JSON array of instances): {0}")]
    Json(String),
    /// An instance lacks a field or holds a wrong value.
    #[error("instance {index}{}: {field}: {detail}", .question_id.as_ref().map(|id| format!(" (question_id {id:?})")).unwrap_or_default())]
    Field {
        /// Its position in the array, from 0.
        index: usize,
        /// Its `question_id`, when it has one.
        question_id: Option<String>,
        /// The field.
        field: String,
        /// What is wrong.
        detail: String,
    },
}

/// The six question types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QuestionType {
    /// A fact the user stated in one session.
    SingleSessionUser,
    /// Something the assistant said in one session.
    SingleSessionAssistant,
    /// A preference to be applied (the answer is a rubric).
    SingleSessionPreference,
    /// Reasoning over dates and durations.
    TemporalReasoning,
    /// A fact that changed: the latest value is asked.
    KnowledgeUpdate,
    /// Information gathered across sessions.
    MultiSession,
}

impl QuestionType {
    /// Every type, in the paper's order.
    pub const ALL: [QuestionType; 6] = [
        QuestionType::SingleSessionUser,
        QuestionType::SingleSessionAssistant,
        QuestionType::SingleSessionPreference,
        QuestionType::TemporalReasoning,
        QuestionType::KnowledgeUpdate,
        QuestionType::MultiSession,
    ];

    /// The name the files use.
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionType::SingleSessionUser => "single-session-user",
            QuestionType::SingleSessionAssistant => "single-session-assistant",
            QuestionType::SingleSessionPreference => "single-session-preference",
            QuestionType::TemporalReasoning => "temporal-reasoning",
            QuestionType::KnowledgeUpdate => "knowledge-update",
            QuestionType::MultiSession => "multi-session",
        }
    }

    /// The type a file names.
    pub fn parse(name: &str) -> Option<QuestionType> {
        QuestionType::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for QuestionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One turn of a haystack session.
#[derive(Debug, Clone, PartialEq)]
pub struct LmeTurn {
    /// User or assistant.
    pub role: Role,
    /// What was said.
    pub content: String,
    /// In evidence sessions: whether this turn holds the answer.
    pub has_answer: Option<bool>,
}

/// One dated haystack session.
#[derive(Debug, Clone, PartialEq)]
pub struct LmeSession {
    /// Its id (evidence sessions' ids contain `answer`).
    pub id: String,
    /// Its date as written (`2023/05/20 (Sat) 02:21`).
    pub date: String,
    /// Its turns.
    pub turns: Vec<LmeTurn>,
}

/// One question with its history.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// Position in the file, from 0.
    pub index: usize,
    /// Unique id; abstention questions' ids contain `_abs`.
    pub question_id: String,
    /// What ability it tests.
    pub question_type: QuestionType,
    /// The question.
    pub question: String,
    /// The answer (a rubric for preference questions; numbers are written as text).
    pub answer: String,
    /// When it is asked, as written.
    pub question_date: String,
    /// The day it is asked.
    pub question_day: Day,
    /// The history, in the file's order (time order in S and M).
    pub sessions: Vec<LmeSession>,
    /// The evidence sessions' ids.
    pub answer_session_ids: Vec<String>,
}

impl Instance {
    /// Whether the answer is not in the history (the model should say so).
    pub fn is_abstention(&self) -> bool {
        self.question_id.contains("_abs")
    }

    /// Evidence session ids that name no session of the haystack: a broken instance, reported
    /// rather than scored.
    pub fn unknown_answer_sessions(&self) -> Vec<&str> {
        self.answer_session_ids
            .iter()
            .filter(|id| !self.sessions.iter().any(|s| &s.id == *id))
            .map(String::as_str)
            .collect()
    }

    /// Reads one instance of the array.
    pub fn from_value(index: usize, value: Value) -> Result<Instance, LongMemEvalError> {
        let Value::Object(object) = value else {
            return Err(field_error(index, None, "(instance)", "not a JSON object"));
        };
        let question_id = object
            .get("question_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let reader = FieldReader {
            index,
            question_id: question_id.clone(),
            object: &object,
        };
        let question_id = reader.string("question_id")?;
        let type_name = reader.string("question_type")?;
        let question_type = QuestionType::parse(&type_name)
            .ok_or_else(|| reader.error("question_type", format!("unknown type {type_name:?}")))?;
        let answer = match object.get("answer") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => {
                return Err(reader.error("answer", format!("a string or number, not {other}")))
            }
            None => return Err(reader.error("answer", "missing")),
        };
        let question_date = reader.string("question_date")?;
        let question_day = Day::find(&question_date).ok_or_else(|| {
            reader.error("question_date", format!("no date in {question_date:?}"))
        })?;
        let ids = reader.strings("haystack_session_ids")?;
        let dates = reader.strings("haystack_dates")?;
        let sessions = reader.array("haystack_sessions")?;
        if dates.len() != ids.len() || sessions.len() != ids.len() {
            return Err(reader.error(
                "haystack_sessions",
                format!(
                    "{} sessions, {} haystack_session_ids and {} haystack_dates (one each per session)",
                    sessions.len(),
                    ids.len(),
                    dates.len()
                ),
            ));
        }
        let sessions = ids
            .into_iter()
            .zip(dates)
            .zip(sessions)
            .enumerate()
            .map(|(s, ((id, date), turns))| {
                Ok(LmeSession {
                    turns: reader.turns(s, turns)?,
                    id,
                    date,
                })
            })
            .collect::<Result<Vec<_>, LongMemEvalError>>()?;
        Ok(Instance {
            index,
            question_type,
            question: reader.string("question")?,
            answer,
            question_date,
            question_day,
            sessions,
            answer_session_ids: reader.strings("answer_session_ids")?,
            question_id,
        })
    }
}

fn field_error(
    index: usize,
    question_id: Option<String>,
    field: &str,
    detail: impl Into<String>,
) -> LongMemEvalError {
    LongMemEvalError::Field {
        index,
        question_id,
        field: field.to_string(),
        detail: detail.into(),
    }
}

/// Typed access to an instance's fields, with errors naming them.
struct FieldReader<'a> {
    index: usize,
    question_id: Option<String>,
    object: &'a Map<String, Value>,
}

impl FieldReader<'_> {
    fn error(&self, field: &str, detail: impl Into<String>) -> LongMemEvalError {
        field_error(self.index, self.question_id.clone(), field, detail)
    }

    fn get(&self, field: &str) -> Result<&Value, LongMemEvalError> {
        self.object
            .get(field)
            .ok_or_else(|| self.error(field, "missing"))
    }

    fn string(&self, field: &str) -> Result<String, LongMemEvalError> {
        match self.get(field)? {
            Value::String(s) => Ok(s.clone()),
            other => Err(self.error(field, format!("a string, not {other}"))),
        }
    }

    fn array(&self, field: &str) -> Result<&Vec<Value>, LongMemEvalError> {
        match self.get(field)? {
            Value::Array(items) => Ok(items),
            other => Err(self.error(field, format!("an array, not {}", kind(other)))),
        }
    }

    fn strings(&self, field: &str) -> Result<Vec<String>, LongMemEvalError> {
        self.array(field)?
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                other => {
                    Err(self.error(&format!("{field}[{i}]"), format!("a string, not {other}")))
                }
            })
            .collect()
    }

    fn turns(&self, session: usize, turns: &Value) -> Result<Vec<LmeTurn>, LongMemEvalError> {
        let Value::Array(turns) = turns else {
            return Err(self.error(
                &format!("haystack_sessions[{session}]"),
                format!("a list of turns, not {}", kind(turns)),
            ));
        };
        turns
            .iter()
            .enumerate()
            .map(|(t, turn)| {
                let field = |name: &str| format!("haystack_sessions[{session}][{t}].{name}");
                let role = match turn.get("role").and_then(Value::as_str) {
                    Some("user") => Role::User,
                    Some("assistant") => Role::Assistant,
                    Some(other) => {
                        return Err(self.error(
                            &field("role"),
                            format!("{other:?} is not user or assistant"),
                        ))
                    }
                    None => return Err(self.error(&field("role"), "missing or not a string")),
                };
                let content = turn
                    .get("content")
                    .and_then(Value::as_str)
                    .ok_or_else(|| self.error(&field("content"), "missing or not a string"))?;
                let has_answer = match turn.get("has_answer") {
                    None | Some(Value::Null) => None,
                    Some(Value::Bool(b)) => Some(*b),
                    Some(other) => {
                        return Err(
                            self.error(&field("has_answer"), format!("a boolean, not {other}"))
                        )
                    }
                };
                Ok(LmeTurn {
                    role,
                    content: content.to_string(),
                    has_answer,
                })
            })
            .collect()
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Which release a file is, from its name (`S`, `M`, `oracle`, with `(cleaned)`), for reports;
/// `None` for another name (the format is the same).
pub fn variant(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    Some(match name {
        "longmemeval_s.json" => "S",
        "longmemeval_s_cleaned.json" => "S (cleaned)",
        "longmemeval_m.json" => "M",
        "longmemeval_m_cleaned.json" => "M (cleaned)",
        "longmemeval_oracle.json" => "oracle",
        _ => return None,
    })
}

/// Calls `each` with every instance of the array `reader` holds, in order, holding one
/// instance in memory at a time; stops at the first error (of the file or of `each`). Returns
/// the number of instances read.
pub fn for_each_instance<R, E>(
    reader: R,
    each: impl FnMut(Instance) -> Result<(), E>,
) -> Result<usize, E>
where
    R: Read,
    E: From<LongMemEvalError>,
{
    let mut stopped = None;
    let mut seed = InstanceSeed {
        each,
        stopped: &mut stopped,
        count: 0,
    };
    let mut deserializer = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    let result = (&mut deserializer)
        .deserialize_seq(&mut seed)
        .and_then(|()| deserializer.end());
    let count = seed.count;
    if let Some(error) = stopped {
        return Err(error);
    }
    match result {
        Ok(()) => Ok(count),
        Err(e) => Err(LongMemEvalError::Json(format!("after {count} instance(s): {e}")).into()),
    }
}

/// Opens `path` and reads it with [`for_each_instance`].
pub fn for_each_instance_in<E>(
    path: &Path,
    each: impl FnMut(Instance) -> Result<(), E>,
) -> Result<usize, E>
where
    E: From<LongMemEvalError>,
{
    let file = std::fs::File::open(path).map_err(|e| LongMemEvalError::Io {
        path: path.display().to_string(),
        detail: e.to_string(),
    })?;
    for_each_instance(file, each)
}

/// The visitor of the top-level array: each element becomes an [`Instance`] and goes to the
/// callback at once.
struct InstanceSeed<'s, F, E> {
    each: F,
    stopped: &'s mut Option<E>,
    count: usize,
}

impl<'de, F, E> Visitor<'de> for &mut InstanceSeed<'_, F, E>
where
    F: FnMut(Instance) -> Result<(), E>,
    E: From<LongMemEvalError>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of LongMemEval instances")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(value) = seq.next_element::<Value>()? {
            let index = self.count;
            self.count += 1;
            let outcome = Instance::from_value(index, value)
                .map_err(E::from)
                .and_then(|instance| (self.each)(instance));
            if let Err(error) = outcome {
                *self.stopped = Some(error);
                return Err(serde::de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}
