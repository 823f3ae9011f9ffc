//! Integration tests of `mb-baselines`, one binary: the retrieval baselines and Vanilla on the
//! built-in sample and (when present) the real LoCoMo conversations.

mod agentic;
mod amem_evolution;
mod common;
mod embedding_overlap;
mod example_system;
mod hybrid;
mod hybrid_rerank;
mod hybrid_sessions;
mod mem0_inputs;
mod memoryos;
mod operations;
mod raptor;
mod retrieval;
mod settings_fuzz;
mod upstream_words;
mod vanilla;
