//! Memory tools over a memory system of the registry (`mb_baselines::registry`), per tenant,
//! with ingest through a durable queue memorized in the background.

pub mod edit;
pub mod gate;
pub mod ids;
pub mod ingest;
pub mod messages;
mod owner;
pub mod queue;
pub mod service;

pub use owner::Owner;
