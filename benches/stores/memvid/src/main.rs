//! Build check of memvid-core 2.0.140 (`lex` + `vec`), the stores benchmark's Rust-native peer.
//!
//! Not yet a benchmark: on the shared 2-core machine of 2026-11-26 its 339-package dependency
//! tree (tantivy 0.24, ort, tokenizers, hnsw, ...) had compiled 118 packages after 29 minutes
//! (at low priority beside other builds) and was stopped; see `docs/stores.md`. Build it alone
//! with `cargo build --release --manifest-path benches/stores/memvid/Cargo.toml`.
use memvid_core as _;

fn main() {}
