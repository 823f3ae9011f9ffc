//! Integration tests of `mb-harness`, one binary: the commands run as a user runs them.

mod accounting;
mod action_feedback;
mod common;
mod differential;
mod endtoend;
mod failures;
mod feedback_usefulness;
mod flag_fuzz;
mod hostile_input;
mod import;
mod installed;
mod longmemeval;
mod longmemeval_official;
mod memory_cache;
mod offpolicy;
mod onpolicy;
mod paired_settings;
mod provenance;
mod python_system;
mod real_model;
mod regimes;
mod resume;
mod retrieve;
mod secrets;
mod sweep;
mod upstream_flags;
