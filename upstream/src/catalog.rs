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
    /// Vanilla's long-context answer on corpus datasets (`src/solver/base.py`), English.
    AnswerLongContextEn,
    /// Vanilla's long-context answer, Chinese.
    AnswerLongContextZh,
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
    /// Vanilla (`wo_memory`) answering with the corpus conversation as context.
    LongContext,
}

impl Prompt {
    /// The answer prompt of `of` in `lang`.
    pub fn answer(of: AnswerOf, lang: Lang) -> Prompt {
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
    /// The first 16 hex digits of the SHA-256 of the literals' source text (prefixes and quotes
    /// included, joined without what stands between them) at [`KNOWN_COMMIT`].
    pub sha256: &'static str,
}

const fn row(
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
        sha256,
    }
}

/// A row whose plain string upstream fills with `str.format`.
const fn format_row(
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

/// A row in the commented-out block that starts with `# {block}`.
const fn commented_row(entry: Entry, block: &'static str) -> Entry {
    Entry {
        commented: Some(block),
        ..entry
    }
}

use Prompt::*;
use Select::{Assigned, Nth, Returned};

/// LoCoMo's dataset module.
const LOCOMO: &str = "src/dataset/Locomo.py";

/// Where upstream's vendored Mem0 keeps its prompts.
const MEM0_PROMPTS: &str = "baselines/mem0/mem0/configs/prompts.py";

/// Every prompt, where it stands and its hash.
pub(crate) static CATALOG: &[Entry] = &[
    row(
        AnswerBm25En,
        "answer.bm25.en",
        "src/agent/bm25.py",
        "BM25Agent.generate_response",
        Assigned("user_prompt", 0),
        "3a67aa8942a9be70",
    ),
    row(
        AnswerBm25Zh,
        "answer.bm25.zh",
        "src/agent/bm25.py",
        "BM25Agent.generate_response",
        Assigned("user_prompt", 1),
        "44af3f0174020318",
    ),
    row(
        AnswerBm25DialogEn,
        "answer.bm25_dialog.en",
        "src/agent/bm25_dialog.py",
        "BM25DialogAgent.generate_response",
        Assigned("user_prompt", 0),
        "3a67aa8942a9be70",
    ),
    row(
        AnswerBm25DialogZh,
        "answer.bm25_dialog.zh",
        "src/agent/bm25_dialog.py",
        "BM25DialogAgent.generate_response",
        Assigned("user_prompt", 1),
        "44af3f0174020318",
    ),
    row(
        AnswerEmbedderEn,
        "answer.embedder.en",
        "src/agent/embedder.py",
        "EmbedderAgent.generate_response",
        Assigned("user_prompt", 0),
        "3a67aa8942a9be70",
    ),
    row(
        AnswerEmbedderZh,
        "answer.embedder.zh",
        "src/agent/embedder.py",
        "EmbedderAgent.generate_response",
        Assigned("user_prompt", 1),
        "44af3f0174020318",
    ),
    row(
        AnswerEmbedderDialogEn,
        "answer.embedder_dialog.en",
        "src/agent/embedder_dialog.py",
        "EmbedderDialogAgent.generate_response",
        Assigned("user_prompt", 0),
        "3a67aa8942a9be70",
    ),
    row(
        AnswerEmbedderDialogZh,
        "answer.embedder_dialog.zh",
        "src/agent/embedder_dialog.py",
        "EmbedderDialogAgent.generate_response",
        Assigned("user_prompt", 1),
        "44af3f0174020318",
    ),
    row(
        AnswerAMemEn,
        "answer.a_mem.en",
        "src/agent/a_mem.py",
        "AMemAgent.generate_response",
        Assigned("user_prompt", 0),
        "3a67aa8942a9be70",
    ),
    row(
        AnswerAMemZh,
        "answer.a_mem.zh",
        "src/agent/a_mem.py",
        "AMemAgent.generate_response",
        Assigned("user_prompt", 1),
        "44af3f0174020318",
    ),
    row(
        AnswerMem0En,
        "answer.mem0.en",
        "src/agent/mem0.py",
        "Mem0Agent.generate_response",
        Assigned("user_prompt", 0),
        "bbae31108b9988e2",
    ),
    row(
        AnswerMem0Zh,
        "answer.mem0.zh",
        "src/agent/mem0.py",
        "Mem0Agent.generate_response",
        Assigned("user_prompt", 1),
        "0b311360c90f29a9",
    ),
    row(
        AnswerLongContextEn,
        "answer.long_context.en",
        "src/solver/base.py",
        "BaseSolver.predict_test_with_corpus.solve_data",
        Assigned("user_prompt", 0),
        "3a67aa8942a9be70",
    ),
    row(
        AnswerLongContextZh,
        "answer.long_context.zh",
        "src/solver/base.py",
        "BaseSolver.predict_test_with_corpus.solve_data",
        Assigned("user_prompt", 1),
        "44af3f0174020318",
    ),
    row(
        Mem0FactExtraction,
        "mem0.extract_facts",
        MEM0_PROMPTS,
        "",
        Assigned("FACT_RETRIEVAL_PROMPT", 0),
        "e6ef019a5862b6af",
    ),
    row(
        Mem0UpdateInstructions,
        "mem0.update.instructions",
        MEM0_PROMPTS,
        "",
        Assigned("DEFAULT_UPDATE_MEMORY_PROMPT", 0),
        "81ef17ac66324c74",
    ),
    row(
        Mem0UpdateStoredMemories,
        "mem0.update.stored_memories",
        MEM0_PROMPTS,
        "get_update_memory_messages",
        Assigned("current_memory_part", 0),
        "dfad691367132b37",
    ),
    row(
        Mem0UpdateNoMemories,
        "mem0.update.no_memories",
        MEM0_PROMPTS,
        "get_update_memory_messages",
        Assigned("current_memory_part", 1),
        "bd734c5da6503f51",
    ),
    row(
        Mem0UpdateFrame,
        "mem0.update.frame",
        MEM0_PROMPTS,
        "get_update_memory_messages",
        Returned(0),
        "3f5b2971a21918f6",
    ),
    row(
        AMemQueryKeywords,
        "a_mem.query_keywords",
        "src/agent/a_mem.py",
        "AMemAgent.generate_query_llm",
        Assigned("prompt", 0),
        "d86d3e3069c71627",
    ),
    row(
        AMemAnalyzeNote,
        "a_mem.analyze_note",
        "baselines/A_mem/agentic_memory/memory_system.py",
        "AgenticMemorySystem.analyze_content",
        Assigned("prompt", 0),
        "1786c23ddaadaf7a",
    ),
    row(
        AMemSystem,
        "a_mem.system",
        "baselines/A_mem/agentic_memory/llm_controller.py",
        "VllmController.get_completion",
        Nth(3),
        "bf792c5511717ebc",
    ),
    format_row(
        NfcatsJudge,
        "nfcats.judge",
        "src/dataset/NFCats.py",
        "",
        Assigned("prompt_template", 0),
        "ccb9d68d79ed3e26",
    ),
    row(
        NfcatsJudgeSystem,
        "nfcats.judge.system",
        "src/dataset/NFCats.py",
        "NFCats_Dataset.evaluate_single",
        Nth(3),
        "776e84186ddaa3b9",
    ),
    format_row(
        LocomoPreamble,
        "locomo.preamble",
        LOCOMO,
        "",
        Assigned("CONV_START_PROMPT", 0),
        "3032155466f64d46",
    ),
    format_row(
        LocomoQuestion,
        "locomo.question",
        LOCOMO,
        "",
        Assigned("QA_PROMPT", 0),
        "90294114d911f6d8",
    ),
    format_row(
        LocomoAdversarialQuestion,
        "locomo.adversarial_question",
        LOCOMO,
        "",
        Assigned("QA_PROMPT_CAT_5", 0),
        "6bd5baf08a4fdb72",
    ),
    commented_row(
        row(
            LocomoDatedSuffix,
            "locomo.dated_suffix",
            LOCOMO,
            "_load_data",
            Nth(11),
            "16bedfcf05bdfbc8",
        ),
        "def _load_data(",
    ),
    commented_row(
        format_row(
            LocomoAdversarialOptions,
            "locomo.adversarial_options",
            LOCOMO,
            "_load_data",
            Nth(15),
            "e5b52509c6956b09",
        ),
        "def _load_data(",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_has_one_row_and_every_name_is_unique() {
        let mut names: Vec<&str> = CATALOG.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CATALOG.len());
        let mut prompts: Vec<Prompt> = CATALOG.iter().map(|e| e.prompt).collect();
        prompts.sort_unstable();
        prompts.dedup();
        assert_eq!(prompts.len(), CATALOG.len());
    }
}
