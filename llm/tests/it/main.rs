//! Integration tests of `mb-llm`, one binary: providers, operations, recording, settings.

mod operations;
mod providers;
mod record_and_ledger;
mod settings;
