//! The process-wide ONNX Runtime environment.
//!
//! ONNX Runtime is loaded from a shared library at run time (`ort`'s `load-dynamic`), and a
//! process may hold only one environment. Every [`super::OnnxEmbedder`] shares it; asking for a
//! second, different library in the same process is an error rather than a silent mix.

use std::path::{Path, PathBuf};

use ort::environment::Environment;
use parking_lot::Mutex;

use crate::error::{EmbedError, Result};

static LOADED: Mutex<Option<(PathBuf, &'static Environment)>> = Mutex::new(None);

/// The environment of the library at `library`, loading it on first use.
pub(crate) fn environment(library: &Path) -> Result<&'static Environment> {
    let mut loaded = LOADED.lock();
    if let Some((path, environment)) = loaded.as_ref() {
        return if same_file(path, library) {
            Ok(environment)
        } else {
            Err(EmbedError::Runtime {
                path: library.to_path_buf(),
                detail: format!(
                    "this process already loaded ONNX Runtime from {}; one process can use only one",
                    path.display()
                ),
            })
        };
    }
    let fail = |detail: String| EmbedError::Runtime {
        path: library.to_path_buf(),
        detail,
    };
    if !library.is_file() {
        return Err(fail("no such file".to_string()));
    }
    let environment = ort::init_from(library)
        .map_err(|e| fail(e.to_string()))?
        .with_name("mb-embed")
        .with_telemetry(false)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let environment: &'static Environment = Box::leak(Box::new(environment));
    tracing::debug!(library = %library.display(), "loaded ONNX Runtime");
    *loaded = Some((library.to_path_buf(), environment));
    Ok(environment)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
