//! The catalog's rows of LongMemEval's official code (xiaowu0162/LongMemEval): the judge's
//! templates in `get_anscheck_prompt` and the reading prompt's pieces in `prepare_prompt`, each
//! where it stands and the hash of its text at [`LONGMEMEVAL_COMMIT`]. A table of its own: these
//! rows are read from a LongMemEval checkout ([`crate::LongMemEval`]), never from MemoryBench's.

use super::Select::{Assigned, Nth};
use super::{format_row, row, Entry, Prompt};

/// The LongMemEval commit whose wording the hashes below describe.
pub const LONGMEMEVAL_COMMIT: &str = "9e0b455f4ef0e2ab8f2e582289761153549043fc";

/// A template of LongMemEval's official code the project can send in its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LongMemEvalPrompt {
    /// The judge of `single-session-user`, `single-session-assistant` and `multi-session`
    /// answers (`get_anscheck_prompt`, `src/evaluation/evaluate_qa.py`).
    JudgeAnswer,
    /// The judge of `temporal-reasoning` answers (off-by-one counts accepted).
    JudgeTemporal,
    /// The judge of `knowledge-update` answers (earlier values beside the updated one accepted).
    JudgeKnowledgeUpdate,
    /// The judge of `single-session-preference` answers, against a rubric.
    JudgePreference,
    /// The judge of abstention (`_abs`) answers, whatever the type.
    JudgeAbstention,
    /// The reading prompt without step-by-step reasoning (`--cot false`, `prepare_prompt`,
    /// `src/generation/run_generation.py`).
    ReadingDirect,
    /// The reading prompt asking for the answer step by step (`--cot true`: the official
    /// `con` and `con-separate` reading methods).
    ReadingStepByStep,
    /// Chain-of-Note's reading note of one history item (`con_prompt`).
    Note,
    /// The key a note is shown under in the reading prompt once taken (`{'session_summary':
    /// note}`).
    NoteKey,
    /// What leads each item's JSON in the history (`sess_string = '\n' + json.dumps(…)`).
    JsonLead,
    /// How the history shows each item: its number, its date and its content.
    Session,
}

/// LongMemEval's evaluation script.
const EVALUATE_QA: &str = "src/evaluation/evaluate_qa.py";

/// LongMemEval's generation script.
const RUN_GENERATION: &str = "src/generation/run_generation.py";

/// Where the judge's templates stand.
const JUDGE: &str = "get_anscheck_prompt";

/// Where the reading prompt is built.
const READING: &str = "prepare_prompt";

/// A row of LongMemEval's.
const fn lme(
    prompt: LongMemEvalPrompt,
    name: &'static str,
    file: &'static str,
    scope: &'static str,
    select: super::Select,
    sha256: &'static str,
) -> Entry {
    format_row(
        Prompt::LongMemEval(prompt),
        name,
        file,
        scope,
        select,
        sha256,
    )
}

/// A row of LongMemEval's whose literal is used as it stands (no `str.format`).
const fn lme_plain(
    prompt: LongMemEvalPrompt,
    name: &'static str,
    select: super::Select,
    sha256: &'static str,
) -> Entry {
    row(
        Prompt::LongMemEval(prompt),
        name,
        RUN_GENERATION,
        READING,
        select,
        sha256,
    )
}

use LongMemEvalPrompt::*;

/// Every LongMemEval template, where it stands and its hash.
pub(crate) static LONGMEMEVAL_ROWS: &[Entry] = &[
    lme(
        JudgeAnswer,
        "longmemeval.judge.answer",
        EVALUATE_QA,
        JUDGE,
        Assigned("template", 0),
        "82c67f34ba3546a4",
    ),
    lme(
        JudgeTemporal,
        "longmemeval.judge.temporal",
        EVALUATE_QA,
        JUDGE,
        Assigned("template", 1),
        "aea23a8e15d2ba58",
    ),
    lme(
        JudgeKnowledgeUpdate,
        "longmemeval.judge.knowledge_update",
        EVALUATE_QA,
        JUDGE,
        Assigned("template", 2),
        "ac86beb11ded1e2e",
    ),
    lme(
        JudgePreference,
        "longmemeval.judge.preference",
        EVALUATE_QA,
        JUDGE,
        Assigned("template", 3),
        "d298beed8e9abfa6",
    ),
    lme(
        JudgeAbstention,
        "longmemeval.judge.abstention",
        EVALUATE_QA,
        JUDGE,
        Assigned("template", 4),
        "463e554ba47e82ac",
    ),
    lme(
        ReadingStepByStep,
        "longmemeval.reading.step_by_step",
        RUN_GENERATION,
        READING,
        Assigned("answer_prompt_template", 1),
        "aab8eb60271c3c52",
    ),
    lme(
        ReadingDirect,
        "longmemeval.reading.direct",
        RUN_GENERATION,
        READING,
        Assigned("answer_prompt_template", 2),
        "1fde9720bb76b87b",
    ),
    lme(
        Note,
        "longmemeval.reading.note",
        RUN_GENERATION,
        READING,
        Assigned("con_prompt", 0),
        "aa9eb78512ad1fc8",
    ),
    lme_plain(
        NoteKey,
        "longmemeval.reading.note_key",
        Nth(120),
        "7b1877b1790b58ea",
    ),
    lme_plain(
        JsonLead,
        "longmemeval.reading.json_lead",
        Assigned("sess_string", 1),
        "ad655874dc4396ef",
    ),
    lme(
        Session,
        "longmemeval.reading.session",
        RUN_GENERATION,
        READING,
        Nth(143),
        "6d5f5196251cf47a",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_longmemeval_prompt_has_one_row_and_every_name_is_unique() {
        let mut names: Vec<&str> = LONGMEMEVAL_ROWS.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), LONGMEMEVAL_ROWS.len());
        let mut prompts: Vec<Prompt> = LONGMEMEVAL_ROWS.iter().map(|e| e.prompt).collect();
        prompts.sort_unstable();
        prompts.dedup();
        assert_eq!(prompts.len(), 11);
        assert!(super::super::entries().all(|e| !matches!(e.prompt, Prompt::LongMemEval(_))));
    }
}
