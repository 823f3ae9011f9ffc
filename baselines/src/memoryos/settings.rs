//! MemoryOS's own settings (`configs/memory/memoryos.toml`), defaulting to upstream's behaviour.

use serde::{Deserialize, Serialize};

use crate::settings::OwnSettings;

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

/// MemoryOS's keys in its settings file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct MemoryOsSettings {
    /// File evicted exchanges with an empty side (every LoCoMo/DialSim corpus turn) instead of
    /// dropping them as upstream does.
    pub keep_one_sided: bool,
    /// Which summary of its conversation thread a page shows.
    pub thread_summaries: ThreadSummaries,
    /// Its metadata (short-term queue, sessions and their pages, profile) is written only when
    /// the process exits, as upstream's is, so a copy taken by the process that built the
    /// memory holds only the knowledge kept in Chroma; `false` copies it whole.
    pub metadata_at_exit: bool,
}

impl Default for MemoryOsSettings {
    fn default() -> Self {
        MemoryOsSettings {
            keep_one_sided: false,
            thread_summaries: ThreadSummaries::AsInserted,
            metadata_at_exit: true,
        }
    }
}

impl MemoryOsSettings {
    /// The same settings, filing one-sided exchanges (`keep_one_sided`) or not.
    pub fn keeping_one_sided(self, keep_one_sided: bool) -> Self {
        MemoryOsSettings {
            keep_one_sided,
            ..self
        }
    }

    /// The same settings, pages showing `thread_summaries`.
    pub fn showing(self, thread_summaries: ThreadSummaries) -> Self {
        MemoryOsSettings {
            thread_summaries,
            ..self
        }
    }

    /// The same settings, metadata written only at exit (`metadata_at_exit`) or not.
    pub fn metadata_at_exit(self, metadata_at_exit: bool) -> Self {
        MemoryOsSettings {
            metadata_at_exit,
            ..self
        }
    }
}

impl OwnSettings for MemoryOsSettings {}
