//! What a user does to memories directly, beside feeding dialogs: attach metadata
//! ([`Metadata`]), filter by it ([`MetadataFilter`], mem0's filter language), search with a
//! filter and get records behind results ([`search`], [`RecordIndex`]), list them a page at a time
//! ([`page`]), and edit or delete one
//! memory ([`update`], [`delete`]). The memory tools (`memorybench-mcp`) and Python's
//! `memorybench.Memory` offer the same surface through these.

mod edit;
mod filter;
mod found;

pub use crate::metadata::{stamped, Metadata, MAX_METADATA_BYTES, MAX_METADATA_DEPTH, METADATA};
pub use edit::{delete, update};
pub use filter::{MetadataFilter, MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH};
pub use found::{page, search, Found, RecordIndex};
