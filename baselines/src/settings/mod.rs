//! Settings of the memory systems (`configs/memory/*.toml`): one shape for all, defaulting to
//! upstream's effective values, with the hybrid memory's own table.

pub mod hybrid;

use mb_engine::QuerySyntax;
use serde::{Deserialize, Serialize};

use hybrid::HybridSettings;

/// The most memories a question may retrieve: far above any prompt's room, and small enough
/// that retrying with one memory fewer each time (upstream's backoff) ends.
pub const MAX_RETRIEVE_K: usize = 10_000;

/// Refuses a `retrieve_k` above [`MAX_RETRIEVE_K`] (a flag or a settings file names where it
/// came from around this message).
pub fn check_retrieve_k(k: usize) -> Result<usize, String> {
    if k > MAX_RETRIEVE_K {
        return Err(format!("{k} is above the maximum, {MAX_RETRIEVE_K}"));
    }
    Ok(k)
}

/// Which summary of its conversation thread a MemoryOS page shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadSummaries {
    /// The summary made when the page was filed: upstream MemoryBench's `memoryos_chromadb`,
    /// whose update of the linked pages edits copies Chroma returned, so nothing stored
    /// changes.
    #[default]
    AsInserted,
    /// The thread's latest summary, on every page of the chain: the MemoryOS pip package,
    /// which rewrites the linked pages in place.
    Latest,
}

/// Settings shared by the retrieval baselines, defaulting to upstream's effective values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct SystemSettings {
    /// Memories retrieved per question (upstream's config value, 5; Mem0 10); at most
    /// [`MAX_RETRIEVE_K`].
    pub retrieve_k: usize,
    /// BM25-M/S: how a question is read. `whoosh` (upstream's default `QueryParser` with an
    /// OR group: a word ending in `?` is a wildcard, quotes are phrases, `AND`/`OR`/`NOT`
    /// operators); `plain` ORs the question's words.
    pub query_syntax: QuerySyntax,
    /// Index Chinese rows with the jieba analyzer; `false` (upstream) keeps whole CJK runs as
    /// single tokens, as Whoosh's analyzer does.
    pub cjk_analyzer: bool,
    /// A-Mem: analyze and evolve notes as the original A-Mem does (upstream's MemoryBench
    /// wiring never runs either; `false` reproduces that).
    pub evolution: bool,
    /// MemoryOS: file evicted exchanges with an empty side (every LoCoMo/DialSim corpus turn)
    /// instead of dropping them as upstream does.
    pub keep_one_sided: bool,
    /// MemoryOS: which summary of its conversation thread a page shows.
    pub thread_summaries: ThreadSummaries,
    /// MemoryOS: its metadata (short-term queue, sessions and their pages, profile) is written
    /// only when the process exits, as upstream's is, so a copy taken by the process that
    /// built the memory holds only the knowledge kept in Chroma; `false` copies it whole.
    pub metadata_at_exit: bool,
    /// Systems that embed: the embedder, `onnx` (all-MiniLM-L6-v2 in-process), `hashing`
    /// (model-free) or an OpenAI-compatible endpoint's settings file (a path relative to the
    /// working directory, e.g. `configs/embedder/paper.toml`). `--embedder` overrides it.
    pub embedder: String,
    /// The hybrid memory's settings (`[hybrid]`; other systems ignore them).
    pub hybrid: HybridSettings,
}

impl Default for SystemSettings {
    fn default() -> Self {
        SystemSettings {
            retrieve_k: 5,
            query_syntax: QuerySyntax::Whoosh,
            cjk_analyzer: false,
            evolution: false,
            keep_one_sided: false,
            thread_summaries: ThreadSummaries::AsInserted,
            metadata_at_exit: true,
            embedder: "onnx".into(),
            hybrid: HybridSettings::default(),
        }
    }
}
