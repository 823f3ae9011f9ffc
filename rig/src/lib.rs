#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod document;
mod embedding;
mod error;
mod filter;
mod index;
pub mod offline;

pub use document::DOCUMENT_ID;
pub use embedding::{embedding_model, EmbedderModel, EmbedderTransport, MAX_BATCH};
pub use error::{Error, Result};
pub use filter::{to_engine_filter, RigFilter};
pub use index::{DocumentHit, EngineIndex};

/// The rig crates this one is written against, re-exported so callers use the same versions.
pub use rig_core;
