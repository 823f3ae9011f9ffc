//! One LongMemEval question answered: its haystack memorized into a fresh namespace (dated
//! with the question's date, so time-aware systems resolve "last week" against it), the
//! question retrieving the memory's units, the reading prompt asked of the answer model (with
//! one unit fewer after each failed attempt, as upstream's answers back off), and the judge's
//! verdict; every part timed and counted like a MemoryBench case.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use mb_baselines::{MemoryError, MemorySystem, Retrieved, SystemSpec};
use mb_core::Lang;
use mb_datasets::dataset::CorpusFormat;
use mb_datasets::longmemeval::retrieval::History;
use mb_datasets::longmemeval::Instance;
use mb_eval::longmemeval::judge::{JudgePrompts, JudgeWords, LongMemEvalJudge};
use mb_eval::longmemeval::reading::{
    official_reading_prompt, reading_prompt, ReadingNote, ReadingStyle, ANSWER_TOKENS,
};
use mb_llm::ops::Answer;
use mb_llm::usage_of;
use mb_upstream::{ChatTurn, Chunk, LongMemEval, PARAPHRASED};
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;
use crate::run::cost::{CaseTiming, Cost};
use crate::run::fewer_memories::{with_fewer_memories, AnswerFailures, ERROR_RESPONSE};
use crate::run::partial_log::LogEntry;
use crate::run::Services;
use crate::store::drop_namespace_if_present;

/// One answered and judged question, as the run's log keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LmeCase {
    /// Position in the file.
    pub index: usize,
    /// The question's id.
    pub question_id: String,
    /// Its type, as the file names it.
    pub question_type: String,
    /// Whether it is an abstention question.
    pub abstention: bool,
    /// The answer given ([`ERROR_RESPONSE`] when no attempt got one).
    pub hypothesis: String,
    /// The judge's verdict (`None` when the judge failed).
    pub correct: Option<bool>,
    /// Why the judge gave no verdict.
    #[serde(default)]
    pub judge_error: Option<String>,
    /// The turn ids the memory units shown to the reader cover, in order.
    pub shown_turns: Vec<String>,
    /// Turns memorized, and items the memory stored for them.
    pub turns: usize,
    /// Items the memory held after memorizing the haystack.
    pub items: u64,
    /// Where the case's time went: memorizing the haystack (`memory_corpus`), retrieval and
    /// prompt assembly, and the answer model.
    pub timing: CaseTiming,
    /// What judging cost (not part of the case's time, as MemoryBench's evaluation is not).
    pub judge: Cost,
    /// The answer's failed attempts.
    #[serde(default)]
    pub failures: AnswerFailures,
    /// Fallbacks of memory processing and prediction, by operation.
    #[serde(default)]
    pub fallbacks: BTreeMap<String, u64>,
}

impl LogEntry for LmeCase {
    type Key = String;

    fn key(&self) -> String {
        self.question_id.clone()
    }

    /// A case without an answer or without a verdict is done again when the run resumes.
    fn gave_up(&self) -> bool {
        self.failures.gave_up() || self.correct.is_none()
    }
}

/// How a run reads and judges its questions.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The reading prompt's style.
    pub style: ReadingStyle,
    /// The turns memorized.
    pub history: History,
    /// Units retrieved and shown.
    pub k: usize,
    /// Which words the requests are in.
    pub words: Words,
}

/// Which words a LongMemEval run's reading, notes and judge are in.
#[derive(Debug, Clone)]
pub enum Words {
    /// Ours throughout.
    Ours,
    /// The judge's templates the user supplied (`--judge-prompts`); the reading ours.
    JudgeTemplates(Arc<JudgePrompts>),
    /// The official words, read from a LongMemEval checkout (`--longmemeval-upstream`).
    Official(Arc<LongMemEval>),
}

impl Words {
    /// What the run records as its LongMemEval prompts' source (and `--resume` compares).
    pub fn source(&self) -> String {
        match self {
            Words::Ours => PARAPHRASED.to_string(),
            Words::JudgeTemplates(_) => {
                format!("judge: the --judge-prompts templates; reading: {PARAPHRASED}")
            }
            Words::Official(lme) => lme.provenance(),
        }
    }

    fn official(&self) -> Option<&LongMemEval> {
        match self {
            Words::Official(lme) => Some(lme),
            Words::Ours | Words::JudgeTemplates(_) => None,
        }
    }
}

/// Answers and judges `instance` with `spec`'s memory, in a namespace dropped afterwards.
pub async fn answer_instance(
    services: &Services,
    spec: &'static SystemSpec,
    instance: &Instance,
    reading: &Reading,
) -> Result<LmeCase, HarnessError> {
    let engine = &services.store.engine;
    let namespace = format!("off-policy/longmemeval/{}/{}", spec.name, instance.index);
    drop_namespace_if_present(engine, &namespace)?;
    let system = services.system(spec, &namespace, Lang::En, &instance.question_day.iso())?;
    let conversation = instance.conversation(reading.history);
    let (memorized, memory_cost) = Cost::measure(
        system.as_ref(),
        system.memorize_corpus(&conversation, CorpusFormat::Locomo),
    )
    .await?;
    memorized?;
    let items = system.stats()?.items;

    // Each turn's session date and the turn itself, for the reading prompt.
    let turns: HashMap<&str, Shown<'_>> = conversation
        .sessions
        .iter()
        .flat_map(|s| {
            s.turns.iter().map(move |t| {
                let shown = Shown {
                    date: s.date_time.as_str(),
                    role: t.speaker.as_str(),
                    content: t.text.as_str(),
                };
                (t.dia_id.as_str(), shown)
            })
        })
        .collect();
    let (predicted, usage) = usage_of(predict(system.as_ref(), instance, &turns, reading)).await;
    let predicted = predicted?;
    let mut judge = LongMemEvalJudge {
        question_type: instance.question_type,
        abstention: instance.is_abstention(),
        question: instance.question.clone(),
        answer: instance.answer.clone(),
        hypothesis: predicted.response.clone(),
        words: match &reading.words {
            Words::JudgeTemplates(prompts) => JudgeWords::Supplied(prompts.clone()),
            Words::Ours | Words::Official(_) => JudgeWords::Ours,
        },
    };
    if let Some(lme) = reading.words.official() {
        judge = judge.in_official_words(lme)?;
    }
    let judged_at = Instant::now();
    let (verdict, judge_usage) = usage_of(services.llm.judge.run(&judge, Lang::En)).await;
    let (correct, judge_error) = match verdict {
        Ok(correct) => (Some(correct), None),
        Err(error) if error.is_answer_failure() => (None, Some(error.to_string())),
        Err(error) => return Err(MemoryError::from(error).into()),
    };
    let mut fallbacks = memory_cost.fallbacks.clone();
    for (operation, count) in &usage.fallbacks {
        *fallbacks.entry(operation.clone()).or_default() += count;
    }
    let case = LmeCase {
        index: instance.index,
        question_id: instance.question_id.clone(),
        question_type: instance.question_type.to_string(),
        abstention: instance.is_abstention(),
        hypothesis: predicted.response,
        correct,
        judge_error,
        shown_turns: predicted.shown_turns,
        turns: conversation.turn_count(),
        items,
        timing: CaseTiming {
            predict_memory: predicted.memory_seconds,
            predict_llm: predicted.llm_seconds,
            llm_calls_predict: usage.llm_calls() as f64,
            input_tokens_predict: usage.input_tokens as f64,
            output_tokens_predict: usage.output_tokens as f64,
            fallbacks_predict: usage.fallback_count() as f64,
            ..memory_cost.corpus_share(1.0)
        },
        judge: Cost {
            seconds: judged_at.elapsed().as_secs_f64(),
            llm_operations: judge_usage.llm_calls(),
            input_tokens: judge_usage.input_tokens,
            output_tokens: judge_usage.output_tokens,
            fallbacks: judge_usage.fallbacks,
        },
        failures: predicted.failures,
        fallbacks,
    };
    drop(system);
    engine.drop_namespace(&namespace)?;
    Ok(case)
}

/// What reading the retrieved history produced.
struct Predicted {
    response: String,
    shown_turns: Vec<String>,
    memory_seconds: f64,
    llm_seconds: f64,
    failures: AnswerFailures,
}

/// A memorized turn as the reading prompt shows it: its session's date, who said it, what.
struct Shown<'a> {
    date: &'a str,
    role: &'a str,
    content: &'a str,
}

/// Retrieves `reading.k` units and asks the reading prompt, with one unit fewer after each
/// failed attempt; a question no attempt answers gets [`ERROR_RESPONSE`].
async fn predict(
    system: &dyn MemorySystem,
    instance: &Instance,
    turns: &HashMap<&str, Shown<'_>>,
    reading: &Reading,
) -> Result<Predicted, HarnessError> {
    let started = Instant::now();
    let retrieved = if reading.k == 0 {
        Vec::new()
    } else {
        system
            .retrieve(&instance.question, Lang::En, reading.k)
            .await?
    };
    let memory_seconds = started.elapsed().as_secs_f64();
    let asked = Instant::now();
    let answer = &system.context().llm.answer;
    // Chain-of-Note reads each retrieved unit first, one call each; the answer sees the notes.
    let mut shown_texts: Vec<String> = retrieved.iter().map(|unit| unit.text.clone()).collect();
    // The items as the official reader holds them (used in its words only).
    let mut chunks: Vec<Chunk> = retrieved.iter().map(|unit| chunk_of(unit, turns)).collect();
    if reading.style.takes_notes() {
        for ((unit, text), chunk) in retrieved
            .iter()
            .zip(shown_texts.iter_mut())
            .zip(chunks.iter_mut())
        {
            let mut note = ReadingNote {
                date: date_of(unit, turns),
                content: unit.text.clone(),
                question_date: instance.question_date.clone(),
                question: instance.question.clone(),
                official: None,
            };
            if let Some(lme) = reading.words.official() {
                note = note.in_official_words(lme, chunk)?;
            }
            *text = answer.run(&note, Lang::En).await?;
            *chunk = Chunk::Note(text.clone());
        }
    }
    let attempts: Box<dyn Iterator<Item = usize> + Send> = if retrieved.is_empty() {
        Box::new(std::iter::once(0))
    } else {
        Box::new((1..=retrieved.len()).rev())
    };
    let (answered, failures) = with_fewer_memories(attempts, |shown| {
        let units = &retrieved[..shown];
        let messages = match reading.words.official() {
            Some(lme) => {
                let items: Vec<(String, Chunk)> = units
                    .iter()
                    .zip(&chunks)
                    .map(|(unit, chunk)| (date_of(unit, turns), chunk.clone()))
                    .collect();
                official_reading_prompt(
                    lme,
                    reading.style,
                    &items,
                    &instance.question_date,
                    &instance.question,
                )
            }
            None => {
                let items: Vec<(String, String)> = units
                    .iter()
                    .zip(&shown_texts)
                    .map(|(unit, text)| (date_of(unit, turns), text.clone()))
                    .collect();
                Ok(reading_prompt(
                    reading.style,
                    &items,
                    &instance.question_date,
                    &instance.question,
                ))
            }
        };
        let evidence = units.iter().map(|u| u.text.clone()).collect();
        let operation = messages.map(|messages| {
            Answer::new(messages)
                .with_max_tokens(ANSWER_TOKENS)
                .with_evidence(instance.question.clone(), evidence)
        });
        async move {
            let operation = operation.map_err(mb_llm::LlmError::from)?;
            let response = answer.run(&operation, Lang::En).await?;
            Ok((response, units))
        }
    })
    .await?;
    let Some((response, units)) = answered else {
        tracing::warn!(
            question_id = instance.question_id,
            "no answer, scored as the error answer"
        );
        return Ok(Predicted {
            response: ERROR_RESPONSE.to_string(),
            shown_turns: Vec::new(),
            memory_seconds,
            llm_seconds: asked.elapsed().as_secs_f64(),
            failures,
        });
    };
    Ok(Predicted {
        response,
        shown_turns: units.iter().flat_map(|u| u.turns.clone()).collect(),
        memory_seconds,
        llm_seconds: asked.elapsed().as_secs_f64(),
        failures,
    })
}

/// The date of the session a unit's first turn belongs to (empty when it covers none).
fn date_of(unit: &Retrieved, turns: &HashMap<&str, Shown<'_>>) -> String {
    unit.turns
        .first()
        .and_then(|turn| turns.get(turn.as_str()))
        .map_or_else(String::new, |shown| shown.date.to_string())
}

/// A unit as the official reader shows a retrieved item: the haystack turns it covers (as the
/// official reader looks a retrieved id up in the haystack), or, for a unit covering none (a
/// MemoryOS knowledge entry), its own text.
fn chunk_of(unit: &Retrieved, turns: &HashMap<&str, Shown<'_>>) -> Chunk {
    let covered: Vec<ChatTurn> = unit
        .turns
        .iter()
        .filter_map(|id| turns.get(id.as_str()))
        .map(|shown| ChatTurn {
            role: shown.role.to_string(),
            content: shown.content.to_string(),
        })
        .collect();
    if covered.is_empty() {
        Chunk::Text(unit.text.clone())
    } else {
        Chunk::Turns(covered)
    }
}
