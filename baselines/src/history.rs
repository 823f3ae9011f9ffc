//! A memory system's log of memory changes (Mem0's history): what changed, how, and when.
//! Its own module so that the system trait can return it without depending on a system.

use mb_engine::RecordId;
use serde::{Deserialize, Serialize};

/// What to do with one memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum MemoryEventKind {
    /// Store a new memory.
    Add,
    /// Replace a stored memory's text.
    Update,
    /// Remove a stored memory.
    Delete,
    /// Leave it as it is.
    None,
}

/// One entry of a memory system's history log (Mem0 keeps one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEvent {
    /// The memory's id (`mem<n>`, kept across updates).
    pub memory: String,
    /// `ADD`, `UPDATE` or `DELETE`.
    pub event: MemoryEventKind,
    /// Text before the event.
    pub old_memory: Option<String>,
    /// Text after it.
    pub new_memory: Option<String>,
    /// When it happened (milliseconds since the epoch).
    pub at_ms: i64,
    /// The memory's record, when known as the event is logged (updates and deletes; an add's
    /// record is numbered by the write that logs it), so a deleted memory keeps its id. Kept
    /// under a key of its own (Mem0's `history_record/<n>`): entries are stored in a fixed binary
    /// layout that stores written before it existed must still read.
    #[serde(skip)]
    pub record: Option<RecordId>,
}
