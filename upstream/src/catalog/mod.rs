//! Where each of upstream's prompts stands in its sources, and the hash of the text the known
//! version has there: a declarative table, one row per prompt the project sends in upstream's
//! words. The project holds no sentence of upstream's; these rows only point at them.

use mb_core::Lang;

/// The upstream MemoryBench commit whose wording the hashes below describe.
pub const KNOWN_COMMIT: &str = "9a33aae9d0c1d0c472527ab5bb8c7e2be3263e23";

/// A prompt of upstream's that the project can send in upstream's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Prompt {
    /// BM25-M's answer (`src/agent/bm25.py`), English.
    AnswerBm25En,
    /// BM25-M's answer, Chinese.
    AnswerBm25Zh,
    /// BM25-S's answer (`src/agent/bm25_dialog.py`), English.
    AnswerBm25DialogEn,
    /// BM25-S's answer, Chinese.
    AnswerBm25DialogZh,
    /// Emb-M's answer (`src/agent/embedder.py`), English.
    AnswerEmbedderEn,
    /// Emb-M's answer, Chinese.
    AnswerEmbedderZh,
    /// Emb-S's answer (`src/agent/embedder_dialog.py`), English.
    AnswerEmbedderDialogEn,
    /// Emb-S's answer, Chinese.
    AnswerEmbedderDialogZh,
    /// A-Mem's answer (`src/agent/a_mem.py`), English.
    AnswerAMemEn,
    /// A-Mem's answer, Chinese.
    AnswerAMemZh,
    /// Mem0's answer (`src/agent/mem0.py`), English.
    AnswerMem0En,
    /// Mem0's answer, Chinese.
    AnswerMem0Zh,
    /// RAPTOR's answer (`src/agent/raptor.py`), English.
    AnswerRaptorEn,
    /// RAPTOR's answer, Chinese.
    AnswerRaptorZh,
    /// The system message of RAPTOR's cluster summaries (`TYCSummarizationModel.summarize`).
    RaptorSummarizeSystem,
    /// RAPTOR's request for a cluster's summary, the cluster's text as `context`.
    RaptorSummarize,
    /// Vanilla's long-context answer on corpus datasets (`src/solver/base.py`), English.
    AnswerLongContextEn,
    /// Vanilla's long-context answer, Chinese.
    AnswerLongContextZh,
    /// The feedback-usefulness experiment's prompt (`src/test_feedback.py`, the paper's Q1): a
    /// training question answered with its recorded feedback dialog as context, English.
    FeedbackUsefulnessEn,
    /// The feedback-usefulness prompt, Chinese.
    FeedbackUsefulnessZh,
    /// Mem0's fact extraction, its system message (`FACT_RETRIEVAL_PROMPT`, vendored
    /// `baselines/mem0/mem0/configs/prompts.py`), with today's date as a field.
    Mem0FactExtraction,
    /// Mem0's memory-update instructions (`DEFAULT_UPDATE_MEMORY_PROMPT`).
    Mem0UpdateInstructions,
    /// The update prompt's part showing the stored memories (`get_update_memory_messages`).
    Mem0UpdateStoredMemories,
    /// The update prompt's part when no memory is stored.
    Mem0UpdateNoMemories,
    /// The update prompt's frame: the instructions, the memory part and the new facts.
    Mem0UpdateFrame,
    /// A-Mem's request for a question's keywords (`src/agent/a_mem.py`).
    AMemQueryKeywords,
    /// A-Mem's note analysis (`analyze_content`, vendored `baselines/A_mem`), the note's
    /// content appended.
    AMemAnalyzeNote,
    /// The system message of A-Mem's vLLM client (`VllmController.get_completion`).
    AMemSystem,
    /// A-Mem's memory evolution (`_evolution_system_prompt`, set in `AgenticMemorySystem`'s
    /// constructor): the new note, its nearest notes and their number.
    AMemEvolve,
    /// A piece of MemoryOS's answer prompt.
    MemoryOs(MemoryOsPart),
    /// MemoryOS's continuity check, its system message (`prompts.py`).
    MemoryOsContinuitySystem,
    /// MemoryOS's continuity check, its prompt.
    MemoryOsContinuityUser,
    /// MemoryOS's chain summary (`META_INFO_*`), its system message.
    MemoryOsMetaSystem,
    /// MemoryOS's chain summary, its prompt.
    MemoryOsMetaUser,
    /// How the chain summary shows the new exchange (`generate_page_meta_info`).
    MemoryOsMetaDialogue,
    /// The chain summary's stand-in for a chain without one.
    MemoryOsMetaBeginning,
    /// MemoryOS's profile analysis over its 90 dimensions, its system message.
    MemoryOsProfileSystem,
    /// MemoryOS's profile analysis, its prompt.
    MemoryOsProfileUser,
    /// How the profile analysis shows each page (`_trigger_profile_and_knowledge_update_if_needed`).
    MemoryOsProfilePage,
    /// MemoryOS's knowledge extraction, its system message.
    MemoryOsKnowledgeSystem,
    /// MemoryOS's knowledge extraction, its prompt.
    MemoryOsKnowledgeUser,
    /// MemoryOS's multi-topic summary, its system message.
    MemoryOsTopicsSystem,
    /// MemoryOS's multi-topic summary, its prompt.
    MemoryOsTopicsUser,
    /// The heading the extraction's reply puts before the user's private data.
    MemoryOsKnowledgeUserMarker,
    /// The heading the extraction's reply puts before the assistant's knowledge.
    MemoryOsKnowledgeAssistantMarker,
    /// What the simulated user says to a right LoCoMo answer (`FeedbackAgent`, rule-based).
    FeedbackLocomoRight,
    /// What the simulated user says to a wrong LoCoMo answer.
    FeedbackLocomoWrong,
    /// What the simulated user says to a right DialSim answer.
    FeedbackDialSimRight,
    /// What the simulated user says to a wrong DialSim answer.
    FeedbackDialSimWrong,
    /// DialSim's judge, its system message (`SYS_PROMPT`, `src/dataset/DialSim.py`).
    DialSimJudgeSystem,
    /// DialSim's judge, its prompt, filled by replacing its three marks.
    DialSimJudgeUser,
    /// The mark DialSim's judge prompt replaces with the question (`gpt_judge`).
    DialSimQuestionMark,
    /// The mark it replaces with the true answer.
    DialSimAnswerMark,
    /// The mark it replaces with the prediction.
    DialSimPredictionMark,
    /// HelloBench's checklist judge, its system message (`src/dataset/HelloBench.py`).
    HelloBenchJudgeSystem,
    /// HelloBench's checklist judge, its prompt.
    HelloBenchJudgeUser,
    /// NFCats' judge prompt (`prompt_template`, `src/dataset/NFCats.py`), filled with the
    /// question and the answer.
    NfcatsJudge,
    /// NFCats' judge system message.
    NfcatsJudgeSystem,
    /// LoCoMo's preamble naming the two speakers (`CONV_START_PROMPT`, `src/dataset/Locomo.py`).
    LocomoPreamble,
    /// LoCoMo's question frame (`QA_PROMPT`).
    LocomoQuestion,
    /// LoCoMo's frame of an adversarial (category 5) question (`QA_PROMPT_CAT_5`).
    LocomoAdversarialQuestion,
    /// What LoCoMo appends to a temporal (category 2) question (in the commented-out
    /// `_load_data` that built the published rows).
    LocomoDatedSuffix,
    /// The two options appended to an adversarial question (same place).
    LocomoAdversarialOptions,
    /// WritingBench's critic, its system message (`evaluate_system`,
    /// `src/dataset/writingbench/prompt.py`).
    CriticSystem,
    /// WritingBench's critic, its prompt (`evaluate_prompt`), filled with the criteria, the
    /// query and the response.
    CriticUser,
    /// JRE-L's merged judge prompt (`merge_score_prompt`, `src/dataset/JRE-L.py`).
    MergedJreL,
    /// JRE-L's merged judge, its system message.
    MergedJreLSystem,
    /// JuDGE's merged judge prompt (`src/dataset/JuDGE.py`).
    MergedJudge,
    /// JuDGE's merged judge, its system message.
    MergedJudgeSystem,
    /// IdeaBench's merged judge prompt (`src/dataset/IdeaBench.py`).
    MergedIdeaBench,
    /// IdeaBench's merged judge, its system message.
    MergedIdeaBenchSystem,
    /// IdeaBench's rating of a hypothesis against the paper's abstract
    /// (`RATING_PROMPT_TEMPLATE`).
    IdeaRating,
    /// IdeaBench's ranking request's head, filled with the criterion (`RANKING_PROMPT_PREFIX`).
    IdeaRankingHead,
    /// How the ranking shows the paper's own idea (`_get_llm_ranking`).
    IdeaRankingTarget,
    /// How the ranking shows each generated hypothesis.
    IdeaRankingCandidate,
    /// What the ranking puts between two candidates.
    IdeaRankingJoin,
    /// The ranking request: its head, then the candidates.
    IdeaRankingFrame,
    /// What separates the hypotheses of an IdeaBench answer (`IDEA_SEPARATOR`).
    IdeaSeparator,
    /// The name LimitGen gives an aspect (`prepare_aspect_check_message`, `src/dataset/LimitGen.py`).
    LimitGenAspect(LimitAspect),
    /// LimitGen's check that a limitation concerns the aspect, filled with its name.
    LimitGenAspectCheck,
    /// LimitGen's classification of a limitation into the aspect's subtypes.
    LimitGenSubtypes(LimitAspect),
    /// LimitGen's rating of a limitation against the ground truth, its system message
    /// (`RATING_PROMPT`).
    LimitGenRatingSystem,
    /// LimitGen's rating, its user message, filled with the two limitations.
    LimitGenRatingUser,
    /// A piece of the LLM user simulator's request (`src/agent/user_simulator.py`,
    /// `src/agent/feedback.py`, `src/agent/evaluators/`).
    Simulator(SimulatorPart),
    /// A template of LongMemEval's official code (another checkout, see
    /// [`crate::LongMemEval`]; MemoryBench's [`crate::Upstream`] holds none).
    LongMemEval(LongMemEvalPrompt),
}

/// The four aspects of a paper LimitGen plants limitations in, each with its own subtypes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LimitAspect {
    /// The method (categories `data`, `inappropriate`).
    Methodology,
    /// The experiments (`baseline`, `dataset`, `replace`, `ablation`).
    ExperimentalDesign,
    /// The analysis of results (`metric`, `analysis`).
    ResultAnalysis,
    /// The related work (`citation`, `review`, `description`).
    LiteratureReview,
}

impl LimitAspect {
    /// The aspect of a planted category, as upstream groups them.
    pub fn of(category: &str) -> Option<LimitAspect> {
        Some(match category {
            "data" | "inappropriate" => LimitAspect::Methodology,
            "baseline" | "dataset" | "replace" | "ablation" => LimitAspect::ExperimentalDesign,
            "metric" | "analysis" => LimitAspect::ResultAnalysis,
            "citation" | "review" | "description" => LimitAspect::LiteratureReview,
            _ => return None,
        })
    }
}

/// Whose answer prompt: upstream gives each memory system its own copy (most with the same
/// words), and Vanilla's long-context answer on corpus datasets one more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnswerOf {
    /// BM25-M (`bm25_message`).
    Bm25,
    /// BM25-S (`bm25_dialog`).
    Bm25Dialog,
    /// Emb-M (`embedder_message`).
    Embedder,
    /// Emb-S (`embedder_dialog`).
    EmbedderDialog,
    /// A-Mem.
    AMem,
    /// Mem0.
    Mem0,
    /// RAPTOR.
    Raptor,
    /// Vanilla (`wo_memory`) answering with the corpus conversation as context.
    LongContext,
}

impl Prompt {
    /// The answer prompt of `of` in `lang`.
    pub fn answer(of: AnswerOf, lang: Lang) -> Prompt {
        use Prompt::*;
        let en = lang == Lang::En;
        match of {
            AnswerOf::Bm25 if en => AnswerBm25En,
            AnswerOf::Bm25 => AnswerBm25Zh,
            AnswerOf::Bm25Dialog if en => AnswerBm25DialogEn,
            AnswerOf::Bm25Dialog => AnswerBm25DialogZh,
            AnswerOf::Embedder if en => AnswerEmbedderEn,
            AnswerOf::Embedder => AnswerEmbedderZh,
            AnswerOf::EmbedderDialog if en => AnswerEmbedderDialogEn,
            AnswerOf::EmbedderDialog => AnswerEmbedderDialogZh,
            AnswerOf::AMem if en => AnswerAMemEn,
            AnswerOf::AMem => AnswerAMemZh,
            AnswerOf::Mem0 if en => AnswerMem0En,
            AnswerOf::Mem0 => AnswerMem0Zh,
            AnswerOf::Raptor if en => AnswerRaptorEn,
            AnswerOf::Raptor => AnswerRaptorZh,
            AnswerOf::LongContext if en => AnswerLongContextEn,
            AnswerOf::LongContext => AnswerLongContextZh,
        }
    }
}

impl AnswerOf {
    /// The names upstream's template gives the memory context and the user's input.
    pub(crate) fn fields(self) -> (&'static str, &'static str) {
        match self {
            AnswerOf::Mem0 => ("memories_str", "query"),
            _ => ("context", "question"),
        }
    }
}

/// Which run of string literals in a scope a prompt is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Select {
    /// The `nth` (0-based) run assigned to the name (or passed as that keyword).
    Assigned(&'static str, usize),
    /// The `nth` (0-based) run returned.
    Returned(usize),
    /// The `nth` (0-based) run of the scope, whatever it is bound to (for a string that is
    /// part of an expression, such as `text + " suffix"`).
    Nth(usize),
    /// The `index`-th (0-based) string item of the list assigned to the name (or passed as
    /// that keyword).
    Item(&'static str, usize),
    /// The same, where it must be the list's last string item (so that an item added upstream
    /// is reported rather than left out).
    LastItem(&'static str, usize),
}

/// One row of the catalog.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub prompt: Prompt,
    /// Stable name, used in errors and reports.
    pub name: &'static str,
    /// File, relative to the checkout.
    pub file: &'static str,
    /// `Class.method` (nested functions joined by `.` too); empty for module level.
    pub scope: &'static str,
    pub select: Select,
    /// Whether upstream fills a plain (non-f) string with `str.format`.
    pub format: bool,
    /// The first line (after `# `) of a commented-out block the template stands in: upstream
    /// built its published rows with code it later commented out, so that block is read
    /// un-commented, its scopes named from its own first definition.
    pub commented: Option<&'static str>,
    /// Whether upstream calls `.strip()` on the literal where it assigns it.
    pub strip: bool,
    /// The first 16 hex digits of the SHA-256 of the literals' source text (prefixes and quotes
    /// included, joined without what stands between them) at [`KNOWN_COMMIT`].
    pub sha256: &'static str,
}

pub(super) const fn row(
    prompt: Prompt,
    name: &'static str,
    file: &'static str,
    scope: &'static str,
    select: Select,
    sha256: &'static str,
) -> Entry {
    Entry {
        prompt,
        name,
        file,
        scope,
        select,
        format: false,
        commented: None,
        strip: false,
        sha256,
    }
}

/// A row whose plain string upstream fills with `str.format`.
pub(super) const fn format_row(
    prompt: Prompt,
    name: &'static str,
    file: &'static str,
    scope: &'static str,
    select: Select,
    sha256: &'static str,
) -> Entry {
    Entry {
        format: true,
        ..row(prompt, name, file, scope, select, sha256)
    }
}

/// A row whose literal upstream strips (`"""...""".strip()`) where it assigns it.
pub(super) const fn stripped(entry: Entry) -> Entry {
    Entry {
        strip: true,
        ..entry
    }
}

/// A row in the commented-out block that starts with `# {block}`.
pub(super) const fn commented_row(entry: Entry, block: &'static str) -> Entry {
    Entry {
        commented: Some(block),
        ..entry
    }
}

mod evaluators;
mod experiments;
mod judges;
mod lexicon;
mod longmemeval;
mod memoryos;
mod rows;
mod simulator;

pub(crate) use lexicon::{LexiconRow, JUDGE_LEXICON, JUDGE_LEXICON_FILE};
pub(crate) use longmemeval::LONGMEMEVAL_ROWS;
pub use longmemeval::{LongMemEvalPrompt, LONGMEMEVAL_COMMIT};
pub use memoryos::MemoryOsPart;
pub use simulator::{SimulatorOf, SimulatorPart, UserPiece};

/// Every catalogued prompt: where it stands and its hash.
pub(crate) fn entries() -> impl Iterator<Item = &'static Entry> {
    rows::CATALOG
        .iter()
        .chain(memoryos::MEMORYOS_ROWS)
        .chain(judges::JUDGE_ROWS)
        .chain(simulator::SIMULATOR_ROWS)
        .chain(evaluators::rows())
        .chain(experiments::EXPERIMENT_ROWS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_has_one_row_and_every_name_is_unique() {
        let mut names: Vec<&str> = entries().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        let count = entries().count();
        assert_eq!(names.len(), count);
        let mut prompts: Vec<Prompt> = entries().map(|e| e.prompt).collect();
        prompts.sort_unstable();
        prompts.dedup();
        assert_eq!(prompts.len(), count);
    }
}
