//! Integration tests of `mb-engine`, one binary: storage, indexes, crash safety.

mod attribute_index;
mod bad_input;
mod bm25_parity;
mod concurrency;
mod copy;
mod crash;
mod damage;
mod deferred_stats;
mod filters;
mod forget;
mod model_check;
mod record_deletes;
mod refused_write;
mod reopen;
mod residency;
mod single_writer;
mod stats_snapshot;
mod transfer;
mod upgrade;
mod vector_recall;
mod vector_snapshot;
