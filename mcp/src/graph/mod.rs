//! The knowledge-graph memory of `@modelcontextprotocol/server-memory`, stored in the engine:
//! the data model, the operations with the reference's semantics, and the storage.

pub mod import;
pub mod index;
pub mod model;
pub mod node;
pub mod ops;
pub mod page;
pub mod query;
pub mod resource;
pub mod size;
pub mod store;
pub mod trigram;
