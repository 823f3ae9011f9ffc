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

/// When an exchange of a training dialog happened, as MemoryOS records it and shows it in the
/// answer prompt's short-term history. (Corpus turns carry their session's date, as upstream's
/// solver passes it.)
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Timestamps {
    /// `wall_clock`: the time the exchange is memorized, `YYYY-MM-DD HH:MM:SS` in the system's
    /// time zone, as upstream's `add_memory` stamps it. Prompts then differ from run to run,
    /// so a recorded run's memory requests do not replay.
    #[default]
    WallClock,
    /// `dialog_position`: `<row test_idx>_<message index>` (the form before 2026-12-06): the
    /// same on every run.
    DialogPosition,
    /// A `YYYY-MM-DD HH:MM:SS` given: every exchange carries it (upstream's form, the same on
    /// every run).
    Fixed(String),
}

impl Timestamps {
    /// The timestamp of the exchange starting at message `message` of dialog `dialog`.
    pub fn stamp(&self, dialog: u64, message: usize) -> String {
        match self {
            Timestamps::WallClock => mb_core::clock::local_timestamp(),
            Timestamps::DialogPosition => format!("{dialog}_{message}"),
            Timestamps::Fixed(time) => time.clone(),
        }
    }
}

impl TryFrom<String> for Timestamps {
    type Error = String;

    fn try_from(text: String) -> Result<Timestamps, String> {
        match text.as_str() {
            "wall_clock" => Ok(Timestamps::WallClock),
            "dialog_position" => Ok(Timestamps::DialogPosition),
            time if mb_core::clock::is_timestamp(time) => Ok(Timestamps::Fixed(text)),
            _ => Err(format!(
                "timestamps: {:?} is none of \"wall_clock\", \"dialog_position\" or a \
                 \"YYYY-MM-DD HH:MM:SS\" time",
                mb_core::excerpt(&text, 40)
            )),
        }
    }
}

impl From<Timestamps> for String {
    fn from(timestamps: Timestamps) -> String {
        match timestamps {
            Timestamps::WallClock => "wall_clock".to_string(),
            Timestamps::DialogPosition => "dialog_position".to_string(),
            Timestamps::Fixed(time) => time,
        }
    }
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
    /// When a training dialog's exchanges happened, as recorded and shown.
    pub timestamps: Timestamps,
    /// Keep the pages a session is created with in its page list. Upstream's
    /// `memoryos_chromadb` does not: its session table is the very dictionary its storage
    /// backs sessions up in, and `add_session` overwrites the backup it just wrote (pages
    /// included) with the bare session, so those pages are never analyzed for the profile and
    /// knowledge, and show no thread summary when retrieved (`false`, upstream).
    pub keep_creation_pages: bool,
}

impl Default for MemoryOsSettings {
    fn default() -> Self {
        MemoryOsSettings {
            keep_one_sided: false,
            thread_summaries: ThreadSummaries::AsInserted,
            metadata_at_exit: true,
            timestamps: Timestamps::WallClock,
            keep_creation_pages: false,
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

    /// The same settings, exchanges stamped by `timestamps`.
    pub fn stamping(self, timestamps: Timestamps) -> Self {
        MemoryOsSettings { timestamps, ..self }
    }
}

impl OwnSettings for MemoryOsSettings {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_and_write_their_three_forms() {
        let read = |text: &str| Timestamps::try_from(text.to_string());
        assert_eq!(read("wall_clock"), Ok(Timestamps::WallClock));
        assert_eq!(read("dialog_position"), Ok(Timestamps::DialogPosition));
        let fixed = read("2025-06-01 12:00:00").unwrap();
        assert_eq!(fixed.stamp(3, 4), "2025-06-01 12:00:00");
        assert_eq!(Timestamps::DialogPosition.stamp(3, 4), "3_4");
        assert!(mb_core::clock::is_timestamp(
            &Timestamps::WallClock.stamp(3, 4)
        ));
        assert_eq!(String::from(fixed), "2025-06-01 12:00:00");
        let error = read("2025-06-01T12:00:00").unwrap_err();
        assert!(
            error.starts_with("timestamps: \"2025-06-01T12:00:00\""),
            "{error}"
        );
        let error = mb_core::parse_toml::<MemoryOsSettings>("timestamps = \"soon\"").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("timestamps: \"soon\" is none of"),
            "{error}"
        );
        let settings: MemoryOsSettings =
            mb_core::parse_toml("timestamps = \"dialog_position\"").unwrap();
        assert_eq!(settings.timestamps, Timestamps::DialogPosition);
    }
}
