//! `mb-baselines`: the MemoryBench memory systems (BM25 and embedding RAG, A-Mem, Mem0,
//! MemoryOS) as native structures on [`mb_engine`].
//!
//! The crate is being built up issue by issue; it currently only fixes the dependency on the
//! engine, which every memory system stores its state in.

pub use mb_engine as engine;
