//! What makes runs comparable: the [`GroupKey`] every run of one chart shares, and how a
//! group is named on the page.

use std::ffi::OsStr;
use std::path::Path;

use sha2::{Digest, Sha256};

/// What a run must share with another to be compared with it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct GroupKey {
    /// The regime, with the action of an action-feedback run (`action_feedback like`), without
    /// a step.
    pub regime: String,
    /// `dataset_type/set_name`.
    pub set: String,
    /// The name of the LLM settings (`offline`, `local`, `paper`, or a settings file).
    pub llm: Option<String>,
    /// How many cases the run answered.
    pub cases: Option<usize>,
    /// `--limit` (`None`: every case).
    pub limit: Option<String>,
    /// `--retrieve-k` (`None`: each system's own).
    pub retrieve_k: Option<String>,
    /// Whose words the prompts were in.
    pub prompts: String,
    /// `--data` (`None`: the built-in data).
    pub data: Option<String>,
    /// The memory's embedder (`None` for a system without one, or a group of such systems
    /// alone).
    pub memory_embedder: Option<String>,
}

impl GroupKey {
    /// The group's heading: `off-policy — domain/Sample — llm offline, 10 cases`.
    pub(crate) fn heading(&self) -> String {
        let cases = match self.cases {
            Some(1) => "1 case".to_string(),
            Some(n) => format!("{n} cases"),
            None => "cases unknown".to_string(),
        };
        format!(
            "{} — {} — llm {}, {cases}",
            self.regime,
            self.set,
            self.llm.as_deref().map_or("unknown", short)
        )
    }

    /// The rest of the key, on the line below the heading.
    pub(crate) fn details(&self) -> String {
        let mut parts = vec![
            format!("limit {}", self.limit.as_deref().unwrap_or("none")),
            format!(
                "retrieve_k {}",
                self.retrieve_k.as_deref().unwrap_or("system default")
            ),
            format!("prompts {}", self.prompts),
            format!("data {}", self.data.as_deref().unwrap_or("built-in")),
        ];
        if let Some(llm) = self.llm.as_deref().filter(|llm| short(llm) != *llm) {
            parts.push(format!("llm settings {llm}"));
        }
        if let Some(embedder) = &self.memory_embedder {
            parts.push(format!("memory embedder {embedder}"));
        }
        parts.join(" · ")
    }

    /// The `id` of the group's section: readable, and the same for the same key on every
    /// page (a digest of the whole key tells groups with the same heading apart).
    pub(crate) fn anchor(&self) -> String {
        let slug: String = self
            .heading()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        let slug = slug
            .split('-')
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let digest = Sha256::digest(format!("{self:?}").as_bytes());
        let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        format!("g-{slug}-{hex}")
    }
}

/// A settings file's name without its directories; a name as it is.
fn short(llm: &str) -> &str {
    Path::new(llm)
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or(llm)
}
