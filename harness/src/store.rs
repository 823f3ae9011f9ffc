//! The engine store a command opens (or a temporary one), and the memories in it: a memory
//! system's context in a namespace, and dropping a namespace to build it again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mb_baselines::{MemoryContext, SystemSettings};
use mb_core::Lang;
use mb_embed::Embedder;
use mb_engine::{Engine, EngineOptions};
use mb_llm::LlmStack;

use crate::error::HarnessError;

/// An open engine, and the temporary directory it lives in when the user gave none.
pub struct Store {
    /// The engine. Fields drop in order: the engine closes before its directory is removed.
    pub engine: Arc<Engine>,
    _temporary: Option<TemporaryDir>,
}

impl Store {
    /// Opens the engine at `path`, or in a fresh temporary directory removed when the store is
    /// dropped.
    pub fn open(path: Option<&Path>) -> Result<Store, HarnessError> {
        let (path, temporary) = match path {
            Some(path) => (path.to_path_buf(), None),
            None => {
                let dir = std::env::temp_dir().join(format!("mb-harness-{}", std::process::id()));
                (dir.clone(), Some(TemporaryDir(dir)))
            }
        };
        Ok(Store {
            engine: Arc::new(Engine::open(&path, EngineOptions::default())?),
            _temporary: temporary,
        })
    }
}

/// A directory removed when dropped.
struct TemporaryDir(PathBuf);

impl Drop for TemporaryDir {
    fn drop(&mut self) {
        // Best effort: a leftover temporary directory is harmless.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The context of a memory in `namespace` with `settings`.
pub fn memory_context(
    settings: SystemSettings,
    engine: Arc<Engine>,
    namespace: String,
    llm: Arc<LlmStack>,
    embedder: Option<Arc<dyn Embedder>>,
    lang: Lang,
    date: &str,
) -> Result<MemoryContext, HarnessError> {
    Ok(MemoryContext {
        settings,
        engine,
        namespace,
        llm,
        embedder,
        lang,
        date: date.to_string(),
    })
}

/// Drops `namespace` if the store holds it, so that what is built there next starts empty (a
/// memory built again, or a copy a stopped run left behind).
pub fn drop_namespace_if_present(engine: &Engine, namespace: &str) -> Result<(), HarnessError> {
    if engine.namespace(namespace).is_ok() {
        engine.drop_namespace(namespace)?;
    }
    Ok(())
}
