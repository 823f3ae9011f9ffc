//! MemoryOS's answer prompt (the `memoryos_chromadb` copy upstream runs): the pieces
//! `Memoryos.get_user_prompt` assembles and the two templates of its `prompts.py` they fill.

use super::{format_row, row, Entry, Prompt, Select};

/// One piece of MemoryOS's answer prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryOsPart {
    /// The short-term history, one exchange (English).
    HistoryEn,
    /// The short-term history, one exchange (Chinese).
    HistoryZh,
    /// A retrieved page (English).
    PageEn,
    /// A page's dialogue-chain information (English).
    ChainEn,
    /// A retrieved page (Chinese).
    PageZh,
    /// A page's dialogue-chain information (Chinese).
    ChainZh,
    /// The retrieved pages' heading (English).
    MemoryHeaderEn,
    /// The retrieved pages' heading (Chinese).
    MemoryHeaderZh,
    /// The profile's stand-in when there is none (both languages).
    NoProfile,
    /// The user knowledge's heading (English).
    UserKnowledgeHeaderEn,
    /// The user knowledge's heading (Chinese).
    UserKnowledgeHeaderZh,
    /// One user-knowledge entry.
    UserKnowledgeLine,
    /// The profile and user knowledge (English).
    BackgroundEn,
    /// The profile and user knowledge (Chinese).
    BackgroundZh,
    /// The assistant knowledge's heading (English).
    AssistantKnowledgeHeaderEn,
    /// The assistant knowledge's heading (Chinese).
    AssistantKnowledgeHeaderZh,
    /// One assistant-knowledge entry.
    AssistantKnowledgeLine,
    /// The assistant knowledge's stand-in when none is found (English).
    NoAssistantKnowledgeEn,
    /// The same, Chinese.
    NoAssistantKnowledgeZh,
    /// The conversation metadata's heading (English).
    MetadataHeaderEn,
    /// The conversation metadata's heading (Chinese).
    MetadataHeaderZh,
    /// The metadata's stand-in (English).
    NoMetadataEn,
    /// The metadata's stand-in (Chinese).
    NoMetadataZh,
    /// What joins the system text and the user text.
    Joiner,
    /// The template of the role paragraph (English).
    SystemEn,
    /// The template of the role paragraph (Chinese).
    SystemZh,
    /// The template of the context, memory, traits and query (English).
    UserEn,
    /// The template of the same, Chinese.
    UserZh,
}

/// The answer's module.
const MEMORYOS: &str = "baselines/MemoryOS/memoryos_chromadb/memoryos.py";
/// Its prompts.
const PROMPTS: &str = "baselines/MemoryOS/memoryos_chromadb/prompts.py";
/// The method that assembles the answer prompt.
const SCOPE: &str = "Memoryos.get_user_prompt";

/// The `nth` string of the assembling method.
const fn piece(part: MemoryOsPart, name: &'static str, nth: usize, sha256: &'static str) -> Entry {
    row(
        Prompt::MemoryOs(part),
        name,
        MEMORYOS,
        SCOPE,
        Select::Nth(nth),
        sha256,
    )
}

/// A template of `prompts.py`, filled with `str.format`.
const fn template(
    part: MemoryOsPart,
    name: &'static str,
    constant: &'static str,
    sha256: &'static str,
) -> Entry {
    format_row(
        Prompt::MemoryOs(part),
        name,
        PROMPTS,
        "",
        Select::Assigned(constant, 0),
        sha256,
    )
}

use MemoryOsPart::*;

/// The pieces and templates, with their hashes.
pub(super) static MEMORYOS_ROWS: &[Entry] = &[
    piece(
        HistoryEn,
        "memoryos.answer.history_en",
        7,
        "2f10778388aaeb22",
    ),
    piece(
        HistoryZh,
        "memoryos.answer.history_zh",
        10,
        "d9f1bbd9ac9ed23e",
    ),
    piece(PageEn, "memoryos.answer.page_en", 19, "efc802470d5f80c4"),
    piece(ChainEn, "memoryos.answer.chain_en", 20, "3f85fc95c69614da"),
    piece(PageZh, "memoryos.answer.page_zh", 22, "9339b5844f37cba6"),
    piece(ChainZh, "memoryos.answer.chain_zh", 23, "03456c6b5087030a"),
    piece(
        MemoryHeaderEn,
        "memoryos.answer.memory_header_en",
        24,
        "72629ee9c9a7bef7",
    ),
    piece(
        MemoryHeaderZh,
        "memoryos.answer.memory_header_zh",
        26,
        "b3847e3dd5293079",
    ),
    piece(
        NoProfile,
        "memoryos.answer.no_profile",
        28,
        "d1608978a87393e1",
    ),
    piece(
        UserKnowledgeHeaderEn,
        "memoryos.answer.user_knowledge_header_en",
        30,
        "a93fa1a73c5ac0c1",
    ),
    piece(
        UserKnowledgeHeaderZh,
        "memoryos.answer.user_knowledge_header_zh",
        32,
        "7897c59625c72849",
    ),
    piece(
        UserKnowledgeLine,
        "memoryos.answer.user_knowledge_line",
        33,
        "804b75af0d12749b",
    ),
    piece(
        BackgroundEn,
        "memoryos.answer.background_en",
        34,
        "325091110b34a7a2",
    ),
    piece(
        BackgroundZh,
        "memoryos.answer.background_zh",
        36,
        "f7f93182b223ac60",
    ),
    piece(
        AssistantKnowledgeHeaderEn,
        "memoryos.answer.assistant_knowledge_header_en",
        37,
        "590abee8abfa1fde",
    ),
    piece(
        AssistantKnowledgeHeaderZh,
        "memoryos.answer.assistant_knowledge_header_zh",
        39,
        "2f8e2940ec4e24c4",
    ),
    piece(
        AssistantKnowledgeLine,
        "memoryos.answer.assistant_knowledge_line",
        40,
        "c3a5f4653b949b9b",
    ),
    piece(
        NoAssistantKnowledgeEn,
        "memoryos.answer.no_assistant_knowledge_en",
        41,
        "f17b1117bdedbd91",
    ),
    piece(
        NoAssistantKnowledgeZh,
        "memoryos.answer.no_assistant_knowledge_zh",
        43,
        "cc184b3bd988330d",
    ),
    piece(
        MetadataHeaderEn,
        "memoryos.answer.metadata_header_en",
        44,
        "537d719ffff4df4a",
    ),
    piece(
        MetadataHeaderZh,
        "memoryos.answer.metadata_header_zh",
        46,
        "5bb7bd1f276da702",
    ),
    piece(
        NoMetadataEn,
        "memoryos.answer.no_metadata_en",
        47,
        "8f64f981b8338b3a",
    ),
    piece(
        NoMetadataZh,
        "memoryos.answer.no_metadata_zh",
        49,
        "508e242acabbce48",
    ),
    piece(Joiner, "memoryos.answer.joiner", 52, "90594ac0174da847"),
    template(
        SystemEn,
        "memoryos.answer.system_en",
        "GENERATE_SYSTEM_RESPONSE_SYSTEM_PROMPT_EN",
        "1116e4b18b39e922",
    ),
    template(
        SystemZh,
        "memoryos.answer.system_zh",
        "GENERATE_SYSTEM_RESPONSE_SYSTEM_PROMPT_ZH",
        "77ccf01f311a1d1b",
    ),
    template(
        UserEn,
        "memoryos.answer.user_en",
        "GENERATE_SYSTEM_RESPONSE_USER_PROMPT_EN",
        "522cb1986cbb372e",
    ),
    template(
        UserZh,
        "memoryos.answer.user_zh",
        "GENERATE_SYSTEM_RESPONSE_USER_PROMPT_ZH",
        "1358f5a57254f391",
    ),
];
