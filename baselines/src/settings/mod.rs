//! Settings of the memory systems (`configs/memory/*.toml`).
//!
//! A settings file holds the keys every system reads ([`SystemSettings`]: `retrieve_k`,
//! `embedder`, `cjk_analyzer`) beside the system's own, which the system's module declares as
//! an [`OwnSettings`] type (A-Mem's `evolution`, MemoryOS's `keep_one_sided`, BM25's
//! `query_syntax`, the hybrid memory's `[hybrid]` table); its registry entry names that type,
//! so a file is read against it and a key no one declares is refused with the file and line.
//! The command line's `--retrieve-k` and `--embedder` are applied here too, once, as
//! [`Overrides`].

mod file;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::MemoryError;

pub use file::{read_settings, NoOwnSettings, OwnSettings, SettingsReader};

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

/// What a command line puts over every system's settings file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--retrieve-k`: memories retrieved per question, for every system.
    pub retrieve_k: Option<usize>,
    /// `--embedder`: the embedder of every system that embeds.
    pub embedder: Option<String>,
}

/// One system's settings: the keys every system reads, its own keys (read by the system as its
/// [`OwnSettings`] type through [`own`](Self::own)), and the command line's [`Overrides`].
///
/// It serializes as the file says, without the overrides (run records and memory-cache keys
/// record the flags beside it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemSettings {
    /// Memories retrieved per question (upstream's config value, 5; Mem0 10); at most
    /// [`MAX_RETRIEVE_K`].
    retrieve_k: usize,
    /// Index Chinese rows with the jieba analyzer; `false` (upstream) keeps whole CJK runs as
    /// single tokens, as Whoosh's analyzer does.
    cjk_analyzer: bool,
    /// Systems that embed: `onnx` (all-MiniLM-L6-v2 in-process), `hashing` (model-free) or an
    /// OpenAI-compatible endpoint's settings file (a path relative to the working directory).
    embedder: String,
    /// The system's own keys, as read against its [`OwnSettings`] type.
    #[serde(flatten)]
    own: Map<String, Value>,
    #[serde(skip)]
    overrides: Overrides,
}

impl Default for SystemSettings {
    fn default() -> Self {
        SystemSettings {
            retrieve_k: 5,
            cjk_analyzer: false,
            embedder: "onnx".into(),
            own: Map::new(),
            overrides: Overrides::default(),
        }
    }
}

impl SystemSettings {
    /// Memories retrieved per question: `--retrieve-k` if given, else the file's.
    pub fn retrieve_k(&self) -> usize {
        self.overrides.retrieve_k.unwrap_or(self.retrieve_k)
    }

    /// The embedder a system that embeds runs with: `--embedder` if given, else the file's.
    pub fn embedder(&self) -> &str {
        self.overrides.embedder.as_deref().unwrap_or(&self.embedder)
    }

    /// Whether memories holding Chinese rows are indexed with the jieba analyzer.
    pub fn cjk_analyzer(&self) -> bool {
        self.cjk_analyzer
    }

    /// The system's own settings, `T`'s defaults where the file is silent; an error when the
    /// keys read are not `T`'s (settings read for another system).
    pub fn own<T: OwnSettings>(&self) -> Result<T, MemoryError> {
        serde_json::from_value(Value::Object(self.own.clone()))
            .map_err(|e| MemoryError::Config(format!("settings of another system: {e}")))
    }

    /// The same settings with `own` as the system's own.
    pub fn with_own<T: OwnSettings>(mut self, own: &T) -> Result<Self, MemoryError> {
        self.own = file::to_map(own)?;
        Ok(self)
    }

    /// The same settings, the file's `retrieve_k` replaced (at most [`MAX_RETRIEVE_K`]).
    pub fn with_retrieve_k(mut self, k: usize) -> Result<Self, MemoryError> {
        self.retrieve_k = check_retrieve_k(k).map_err(MemoryError::Config)?;
        Ok(self)
    }

    /// The same settings, the file's `embedder` replaced.
    pub fn with_embedder(mut self, embedder: impl Into<String>) -> Self {
        self.embedder = embedder.into();
        self
    }

    /// The same settings with the command line's `overrides` over the file's values.
    pub fn with_overrides(mut self, overrides: Overrides) -> Self {
        self.overrides = overrides;
        self
    }
}
