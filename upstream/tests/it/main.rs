//! Upstream's wording read from the upstream checkout kept beside the project
//! (`../shared/upstream/MemoryBench`), what a changed checkout does, and the filled templates
//! against what upstream's own Python writes.

mod checkout;
mod feedback;
mod judges;
mod longmemeval;
mod memoryos;
mod merged;
mod python;
mod simulator;
