//! The language of a dataset, a prompt or a memory.

use serde::{Deserialize, Serialize};

/// Language of a dataset's texts, of an operation's prompt and of the facts it records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Chinese.
    Zh,
}
