//! The `memorybench._native` Python module: the engine, the in-process embedder, the memory
//! systems and the benchmark (datasets, scoring, summaries), each a thin layer over the Rust
//! crates. The pure-Python package around it
//! (`py/memorybench/`) adds the exception classes and the LangChain vector store.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod bench;
mod embedder;
mod engine;
mod errors;
mod json;
mod memory;
mod models;
mod records;
mod runtime;

use pyo3::prelude::*;

/// The native module; `memorybench/__init__.py` re-exports its classes.
#[pymodule]
#[pyo3(name = "_native")]
fn native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<engine::PyEngine>()?;
    module.add_class::<records::PyBatch>()?;
    module.add_class::<records::PyRecord>()?;
    module.add_class::<records::PyHit>()?;
    module.add_class::<records::PyWriteReceipt>()?;
    module.add_class::<embedder::PyEmbedder>()?;
    module.add_class::<memory::PyMemory>()?;
    module.add_class::<memory::Found>()?;
    bench::register(module)?;
    module.add("ENGINE_FORMAT", mb_engine::ENGINE_FORMAT)?;
    Ok(())
}
