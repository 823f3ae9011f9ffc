//! LongMemEval's reading: the prompt that shows the retrieved history to the answer model, as
//! the official `run_generation.py` lays it out (one user message; the items sorted by date,
//! each as a numbered session with its date; the current date; the question), and its
//! Chain-of-Note variant, which first asks for a reading note on every retrieved item, one call
//! each, then answers step by step from the notes. Our wording, or with a LongMemEval checkout
//! the official words ([`official_reading_prompt`], [`ReadingNote::in_official_words`]).
//!
//! The official words are passed to these requests explicitly, not through the LLM backend's
//! run-wide `Wording` (which carries MemoryBench's checkout to the operations memory systems
//! share): only LongMemEval's own three requests (reading, note, judge) have LongMemEval words,
//! they are built in one place (the harness's LongMemEval command), and the official prompt
//! needs the items as the official reader holds them ([`Chunk`]: the haystack turns a unit
//! covers), which only that place knows. So each request is built in the official words up
//! front, where a failure is a typed error, and the backend sends it as built.

use mb_core::Lang;
use mb_llm::ops::Operation;
use mb_llm::{Message, Sampling};
use mb_upstream::{Chunk, LongMemEval, Reader, Upstream, UpstreamError};
use serde_json::json;

use super::judge::Official;

/// How retrieved history is shown to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadingStyle {
    /// The official plain reading: the items as dated sessions, then the question.
    Plain,
    /// The official Chain-of-Note: one [`ReadingNote`] call per item, then the notes as dated
    /// sessions and an answer reasoned step by step.
    ChainOfNote,
    /// Ours, one call: the items as a JSON array of `{date, content}`, and the model asked to
    /// note what each says and then reason to the answer in the same reply.
    ChainOfNoteOneCall,
}

impl ReadingStyle {
    /// Whether each item needs its [`ReadingNote`] before the answer prompt.
    pub fn takes_notes(self) -> bool {
        self == ReadingStyle::ChainOfNote
    }
}

/// Most output tokens of the answer, as the official generation allows.
pub const ANSWER_TOKENS: u32 = 800;

/// The reading prompt: `items` (`(date, text)`, any order; shown sorted by date; for
/// [`ReadingStyle::ChainOfNote`], the items' notes), the date the question is asked on, and
/// the question.
pub fn reading_prompt(
    style: ReadingStyle,
    items: &[(String, String)],
    question_date: &str,
    question: &str,
) -> Vec<Message> {
    let mut sorted: Vec<&(String, String)> = items.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let sessions = || {
        sorted
            .iter()
            .enumerate()
            .map(|(i, (date, text))| {
                format!(
                    "\n### Session {}:\nSession Date: {date}\nSession Content:\n{text}\n",
                    i + 1
                )
            })
            .collect::<String>()
    };
    let text = match style {
        ReadingStyle::Plain => format!(
            "Below are earlier chat sessions between you and a user. Answer the question from \
             the sessions that bear on it.\n\n\nHistory Chats:\n{}\nCurrent Date: \
             {question_date}\nQuestion: {question}\nAnswer:",
            sessions()
        ),
        ReadingStyle::ChainOfNote => format!(
            "Below are reading notes taken from earlier chat sessions between you and a user. \
             Answer the question from the notes that bear on it, step by step: first collect \
             the relevant information, then reason from it to the answer.\n\n\nHistory \
             Chats:\n{}\nCurrent Date: {question_date}\nQuestion: {question}\nAnswer (step by \
             step):",
            sessions()
        ),
        ReadingStyle::ChainOfNoteOneCall => {
            let array: Vec<_> = sorted
                .iter()
                .map(|(date, text)| json!({"date": date, "content": text}))
                .collect();
            format!(
                "Chat history:\n{}\n\nToday is {question_date}.\nFirst, for each history item, \
                 write a short note of what it tells about the question (or that it tells \
                 nothing). Then reason step by step from those notes to the answer.\n\n\
                 Question: {question}\nAnswer:",
                serde_json::to_string_pretty(&array).unwrap_or_default()
            )
        }
    };
    vec![Message::user(text)]
}

/// The reading prompt in the official words of `lme`, as `prepare_prompt` builds it: `items`
/// (`(date, item)` in retrieval order; for [`ReadingStyle::ChainOfNote`] the notes,
/// [`Chunk::Note`]) shown sorted by date. [`ReadingStyle::Plain`] is the official `direct`
/// reading (`--cot false`); both Chain-of-Note styles ask for the answer step by step
/// (`--cot true`): [`ReadingStyle::ChainOfNote`] is the official `con-separate`, and
/// [`ReadingStyle::ChainOfNoteOneCall`] the official `con`, whose one call shows the items
/// themselves.
pub fn official_reading_prompt(
    lme: &LongMemEval,
    style: ReadingStyle,
    items: &[(String, Chunk)],
    question_date: &str,
    question: &str,
) -> Result<Vec<Message>, UpstreamError> {
    let reader = match style {
        ReadingStyle::Plain => Reader::Direct,
        ReadingStyle::ChainOfNote | ReadingStyle::ChainOfNoteOneCall => Reader::StepByStep,
    };
    let prompt = lme.reading_prompt(reader, items, question_date, question)?;
    Ok(Official::new(prompt).messages())
}

/// Chain-of-Note's first step for one retrieved item: the user information in it that bears
/// on the question, or `empty`.
///
/// Offline: the item's lines that share a word of four letters or more with the question,
/// or `empty`.
#[derive(Debug, Clone)]
pub struct ReadingNote {
    /// The item's session date.
    pub date: String,
    /// The item's text.
    pub content: String,
    /// The date the question is asked on.
    pub question_date: String,
    /// The question.
    pub question: String,
    /// The request in the official words, when built by [`ReadingNote::in_official_words`].
    pub official: Option<Official>,
}

impl ReadingNote {
    /// This note's request in the official words of `lme` (`con_prompt`), showing the item as
    /// the official reader holds it (`chunk`).
    pub fn in_official_words(
        self,
        lme: &LongMemEval,
        chunk: &Chunk,
    ) -> Result<Self, UpstreamError> {
        let prompt = lme.note_prompt(&self.date, chunk, &self.question_date, &self.question)?;
        Ok(ReadingNote {
            official: Some(Official::new(prompt)),
            ..self
        })
    }
}

/// The note of an item with nothing relevant, as the official prompt asks for it.
pub const EMPTY_NOTE: &str = "empty";

impl Operation for ReadingNote {
    type Output = String;

    fn name(&self) -> &'static str {
        "reading_note"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        if let Some(official) = &self.official {
            return official.messages();
        }
        vec![Message::user(format!(
            "Below is one earlier chat session between you and a user, and a question the user \
             asks now. Write reading notes that pull out every piece of information about the \
             user that helps answer the question. If there is none, write only \"{EMPTY_NOTE}\".\
             \n\n\nChat History:\nSession Date: {}\nSession Content:\n{}\n\nQuestion Date: {}\n\
             Question: {}\nReading notes (information that helps answer the question):",
            self.date, self.content, self.question_date, self.question
        ))]
    }

    /// The official words are not our paraphrase: a run that also has MemoryBench's checkout
    /// does not list the note among its paraphrased prompts.
    fn upstream_messages(
        &self,
        _upstream: &Upstream,
        lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        self.official.as_ref().map(|_| Ok(self.messages(lang)))
    }

    fn sampling(&self) -> Sampling {
        Sampling::new(0.0, 1.0, 500)
    }

    /// The reply stripped as Python strips it (the official reader keeps `.strip()` of it).
    fn parse(&self, text: &str) -> Option<String> {
        Some(mb_upstream::python::strip(text).to_string())
    }

    fn fallback(&self) -> String {
        EMPTY_NOTE.to_string()
    }

    fn offline(&self, _lang: Lang) -> String {
        let words = |text: &str| -> std::collections::HashSet<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().count() >= 4)
                .map(str::to_lowercase)
                .collect()
        };
        let asked = words(&self.question);
        let lines: Vec<&str> = self
            .content
            .lines()
            .filter(|line| !words(line).is_disjoint(&asked))
            .collect();
        if lines.is_empty() {
            EMPTY_NOTE.to_string()
        } else {
            lines.join("\n")
        }
    }
}
