//! `mb-core`: the vocabulary every memorybench-rs crate shares, with no heavy dependencies.
//!
//! Datasets, memory systems, LLM clients and the harness all speak of a [`Lang`], chat
//! [`Message`]s with their [`Role`], wall-clock milliseconds ([`clock::now_ms`]), the waits of a
//! client that retries a busy server ([`retry`]) and Python literals (upstream stores data as
//! Python `repr` output and models write them: [`pyliteral`]) and the text of a panic
//! ([`panic::panic_text`]), whole files read with a size limit ([`files::read_text`]) and
//! replaced whole or not at all ([`atomic_file`]), and the
//! places a relative asset path is looked for ([`search_roots()`]); for tests only (feature
//! `testing`, which the other crates' dev-dependencies enable), the byte scan that proves
//! deleted text gone from a store (`residue`), the data-or-skip rule (`test_data`) and vectors
//! shaped like sentence embeddings (`test_vectors`). Each is
//! defined once, here,
//! low in the crate graph, so that a crate needing only these compiles no storage engine, HTTP
//! client or model runtime.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod atomic_file;
pub mod clock;
pub mod dates;
mod excerpt;
pub mod files;
mod lang;
mod message;
pub mod panic;
pub mod pyliteral;
#[cfg(feature = "testing")]
pub mod residue;
pub mod retry;
mod search_roots;
#[cfg(feature = "testing")]
pub mod test_data;
#[cfg(feature = "testing")]
pub mod test_vectors;
mod toml_text;

pub use excerpt::{excerpt, MESSAGE_CHARS};
pub use lang::Lang;
pub use message::{Message, Role};
pub use search_roots::{locate, search_roots, searched};
pub use toml_text::{parse_toml, TomlError};
