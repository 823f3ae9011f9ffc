//! Upstream's wording read from the upstream checkout kept beside the project
//! (`../shared/upstream/MemoryBench`), and what a changed checkout does.

mod checkout;
mod feedback;
mod judges;
mod memoryos;
