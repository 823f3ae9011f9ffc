//! Finding the ONNX Runtime library and the default model on disk.
//!
//! `scripts/setup.sh` puts both under the checkout's `.cache/` folder. Binaries, tests and
//! examples find that folder by walking up from the current directory and from the executable's
//! directory, so nobody has to set a variable; the variables named here override the search.

use std::path::{Path, PathBuf};

use crate::error::{EmbedError, Result};

/// Overrides the ONNX Runtime library (`libonnxruntime.so`) location.
pub const RUNTIME_ENV: &str = "MB_ONNXRUNTIME_LIB";
/// Overrides the default model directory (`model.onnx` + `tokenizer.json`).
pub const MODEL_DIR_ENV: &str = "MB_EMBED_MODEL_DIR";
/// The command that installs the runtime and the default model.
pub const SETUP_COMMAND: &str = "bash scripts/setup.sh";
/// Model id of the default model's vectors (and the engine space that holds them).
pub const DEFAULT_MODEL_ID: &str = "all-MiniLM-L6-v2-int8";

const RUNTIME_IN_CACHE: &str = ".cache/onnxruntime/libonnxruntime.so";
const MODEL_IN_CACHE: &str = ".cache/models/all-minilm-l6-v2-int8";

/// Where the runtime library and the default model directory are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assets {
    /// The ONNX Runtime shared library.
    pub runtime: PathBuf,
    /// The default model directory (`model.onnx`, `tokenizer.json`, optional pooling config).
    pub model_dir: PathBuf,
}

impl Assets {
    /// Locates both assets: the environment overrides first, then `.cache/` above the current
    /// directory or the running executable.
    pub fn locate() -> Result<Assets> {
        Ok(Assets {
            runtime: Self::runtime()?,
            model_dir: Self::model_dir()?,
        })
    }

    /// Locates the ONNX Runtime library alone.
    pub fn runtime() -> Result<PathBuf> {
        find(
            RUNTIME_ENV,
            RUNTIME_IN_CACHE,
            "ONNX Runtime library",
            "run `bash scripts/setup.sh` in the memorybench-rs checkout, \
             or set MB_ONNXRUNTIME_LIB to a libonnxruntime.so (version 1.31)",
        )
    }

    /// Locates the default model directory alone.
    pub fn model_dir() -> Result<PathBuf> {
        find(
            MODEL_DIR_ENV,
            MODEL_IN_CACHE,
            "embedding model all-MiniLM-L6-v2 (int8)",
            "run `bash scripts/setup.sh` in the memorybench-rs checkout, \
             or set MB_EMBED_MODEL_DIR to a folder with model.onnx and tokenizer.json",
        )
    }
}

fn find(env: &str, relative: &str, what: &'static str, fix: &'static str) -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(env) {
        let path = PathBuf::from(path);
        return if path.exists() {
            Ok(path)
        } else {
            Err(EmbedError::AssetMissing {
                what,
                looked_in: format!("{} (from {env})", path.display()),
                fix,
            })
        };
    }
    let starts = search_roots();
    for start in &starts {
        for dir in start.ancestors() {
            let candidate = dir.join(relative);
            if candidate.exists() {
                return Ok(candidate);
            }
        }
    }
    let looked_in = starts
        .iter()
        .map(|s| format!("{}/{relative} and above", s.display()))
        .collect::<Vec<_>>()
        .join(", ");
    Err(EmbedError::AssetMissing {
        what,
        looked_in,
        fix,
    })
}

fn search_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        if !roots.contains(&dir) {
            roots.push(dir);
        }
    }
    roots
}
