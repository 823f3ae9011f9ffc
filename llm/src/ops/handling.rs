//! What happens when a model's reply cannot be read: upstream's behaviour per operation, or
//! ours.
//!
//! Upstream (MemoryBench's Python) has no general re-ask. Each operation does its own thing:
//! Mem0 strips a code fence and parses strictly, falling back to "no facts"; MemoryOS parses
//! without stripping anything, falling back to an empty list; the feedback simulator ends the
//! conversation; A-Mem sends its keyword request again until the reply parses; judges send the
//! same request again a few times. [`OutputHandling::Upstream`] (the default) reproduces that:
//! each operation declares its [`Patience`] and reads its reply as upstream does
//! ([`super::Operation::parse_as_upstream`], usually with [`read_json`]).
//! [`OutputHandling::Tolerant`] is ours: a forgiving parser (fences, prose around the JSON,
//! Python literals) and corrective follow-up messages (`reasks`), which rescue more replies of a
//! small local model.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How unusable model output is handled (`output_handling` in `configs/llm/*.toml`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputHandling {
    /// Upstream's per-operation behaviour: strict parsing where upstream is strict, the same
    /// request sent again where upstream sends it again, else the fallback at once.
    #[default]
    Upstream,
    /// The tolerant parser, and up to `reasks` corrective follow-ups before the fallback.
    Tolerant,
}

impl OutputHandling {
    /// The name in settings files and run records.
    pub fn name(self) -> &'static str {
        match self {
            OutputHandling::Upstream => "upstream",
            OutputHandling::Tolerant => "tolerant",
        }
    }
}

/// What upstream does when an operation's reply cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Patience {
    /// Uses the fallback at once (Mem0, MemoryOS, the simulator).
    FallBack,
    /// Sends the same request again, `attempts` sends in all, then uses the fallback (judges).
    Resend {
        /// Sends in all, the first included.
        attempts: u32,
    },
    /// Sends the same request again until the reply parses (A-Mem's query keywords). Upstream
    /// has no limit; ours stops at [`RESEND_CAP`] sends and uses the fallback, counted as a
    /// fallback and as a cap hit.
    UntilParsed,
}

/// Most sends of one request under [`Patience::UntilParsed`]: a model that never produces the
/// format would otherwise hold a run forever.
pub const RESEND_CAP: u32 = 50;

impl Patience {
    /// Sends of one request in all, the first included.
    pub fn attempts(self) -> u32 {
        match self {
            Patience::FallBack => 1,
            Patience::Resend { attempts } => attempts.max(1),
            Patience::UntilParsed => RESEND_CAP,
        }
    }
}

/// How upstream reads JSON out of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonReading {
    /// The whole reply, as `json.loads` reads it (surrounding whitespace allowed).
    Plain,
    /// The whole reply after removing one surrounding code fence (```` ```json ```` … ```` ``` ````),
    /// as Mem0's `remove_code_blocks` does, then `json.loads`.
    Fenced,
}

/// The JSON value of `text` read as upstream reads it; `None` when `json.loads` would raise.
pub fn read_json(text: &str, reading: JsonReading) -> Option<Value> {
    let text = match reading {
        JsonReading::Plain => text,
        JsonReading::Fenced => without_fence(text),
    };
    serde_json::from_str(text.trim()).ok()
}

/// `text` without one code fence around all of it, exactly as Mem0's `remove_code_blocks`
/// reads it: the stripped text must match `^```[a-zA-Z0-9]*\n([\s\S]*?)\n```$` (an info
/// string of ASCII letters and digits, a newline, the body, a newline and the closing fence at
/// the very end), and the body, stripped, is kept; anything else stays as it is, stripped.
fn without_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let info_end = rest
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    let Some(body) = rest[info_end..].strip_prefix('\n') else {
        return trimmed;
    };
    match body.strip_suffix("\n```") {
        Some(inner) => inner.trim(),
        None => trimmed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_reading_is_json_loads() {
        assert_eq!(
            read_json(" {\"a\": 1}\n", JsonReading::Plain),
            Some(json!({"a": 1}))
        );
        assert_eq!(
            read_json("```json\n{\"a\": 1}\n```", JsonReading::Plain),
            None
        );
        assert_eq!(read_json("Sure: {\"a\": 1}", JsonReading::Plain), None);
        assert_eq!(read_json("{'a': 1}", JsonReading::Plain), None);
    }

    #[test]
    fn fenced_reading_removes_one_surrounding_fence_only() {
        for text in [
            "```json\n{\"a\": 1}\n```",
            "```\n{\"a\": 1}\n```",
            "```JSON5\n\n {\"a\": 1} \n\n```",
            "{\"a\": 1}",
        ] {
            assert_eq!(
                read_json(text, JsonReading::Fenced),
                Some(json!({"a": 1})),
                "{text}"
            );
        }
        assert_eq!(
            read_json("Here:\n```json\n{\"a\": 1}\n```", JsonReading::Fenced),
            None
        );
        assert_eq!(
            read_json("```json\n{\"a\": 1,}\n```", JsonReading::Fenced),
            None
        );
        // What upstream's pattern does not match stays fenced, and json.loads fails on it.
        for text in [
            "```json{\"a\": 1}```",
            "```json \n{\"a\": 1}\n```",
            "```json-ld\n{\"a\": 1}\n```",
            "```json\n{\"a\": 1}```",
        ] {
            assert_eq!(read_json(text, JsonReading::Fenced), None, "{text}");
        }
    }

    #[test]
    fn patience_counts_sends() {
        assert_eq!(Patience::FallBack.attempts(), 1);
        assert_eq!(Patience::Resend { attempts: 3 }.attempts(), 3);
        assert_eq!(Patience::Resend { attempts: 0 }.attempts(), 1);
        assert_eq!(Patience::UntilParsed.attempts(), RESEND_CAP);
    }
}
