//! `memorybench-mcp`'s integration tests, one binary: the server binary driven over stdio and
//! HTTP by our clients, the official SDKs and the reference server (`support` holds the
//! clients).

mod support;

mod conformance;
mod deletion;
mod differential;
mod graph_bounds;
mod http_limits;
mod ingest_crash;
mod memory_metadata;
mod memory_tools;
mod python_sdk;
mod sharding;
mod tenants;
mod transfer;
