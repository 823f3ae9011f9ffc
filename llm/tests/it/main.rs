//! Integration tests of `mb-llm`, one binary: providers, operations, recording, settings, the
//! local model server.

mod fuzz;
mod local_server;
mod providers;
mod record_and_ledger;
mod replicas;
mod settings;
mod simulator;
mod wire_parameters;
