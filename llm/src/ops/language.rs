//! The language an operation's own prompt (the paraphrase) is written in. Upstream's memory
//! systems prompt in English whatever the dataset's language (Mem0's, A-Mem's and MemoryOS's
//! prompts exist only in English), while answers and judges follow the row's language; so the
//! memory role's prompts are English by default and a setting gives Chinese datasets our
//! Chinese wording of them instead.

use mb_core::Lang;
use serde::{Deserialize, Serialize};

/// Which language an operation's prompt takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptLanguage {
    /// The row's own language (Chinese prompts for Chinese datasets).
    #[default]
    Dataset,
    /// English for every row, as upstream's memory systems prompt.
    English,
}

impl PromptLanguage {
    /// The language a prompt for a row in `lang` is written in.
    pub fn of(self, lang: Lang) -> Lang {
        match self {
            PromptLanguage::Dataset => lang,
            PromptLanguage::English => Lang::En,
        }
    }
}
