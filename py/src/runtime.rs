//! The one asynchronous runtime of the module: memories, model checks and scoring run their
//! asynchronous work on it.

use tokio::runtime::Runtime;

use crate::errors::{PyResultOf, Raised};

/// The runtime, started on first use and shared by every memory and call.
pub(crate) fn runtime() -> PyResultOf<&'static Runtime> {
    static RUNTIME: std::sync::OnceLock<std::io::Result<Runtime>> = std::sync::OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("memorybench")
                .build()
        })
        .as_ref()
        .map_err(|e| Raised::new("MemoryBenchError", format!("cannot start a runtime: {e}")))
}
