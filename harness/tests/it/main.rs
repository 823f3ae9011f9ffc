//! Integration tests of `mb-harness`, one binary: the commands run as a user runs them.

mod common;
mod endtoend;
mod import;
mod memory_cache;
mod offpolicy;
mod regimes;
mod resume;
mod retrieve;
