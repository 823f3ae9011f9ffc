//! Engine, embedder and memory errors as the Python exceptions of `memorybench.errors`.
//!
//! The classes are defined in Python (so they can also subclass `KeyError`, `ValueError` or
//! `OSError`) and looked up once; each carries the Rust error's message, which names what failed.

use mb_baselines::MemoryError;
use mb_embed::EmbedError;
use mb_engine::Error as EngineError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The Python module holding the exception classes.
const ERRORS_MODULE: &str = "memorybench.errors";

/// An error on its way to Python: the exception class's name and the message.
#[derive(Debug)]
pub struct Raised {
    class: &'static str,
    message: String,
}

impl Raised {
    /// An exception of class `class` (a name in `memorybench.errors`).
    pub fn new(class: &'static str, message: impl Into<String>) -> Raised {
        Raised {
            class,
            message: message.into(),
        }
    }

    /// The engine was closed before this call.
    pub fn closed(what: &str) -> Raised {
        Raised::new("EngineClosedError", format!("{what} is closed"))
    }
}

impl From<EngineError> for Raised {
    fn from(error: EngineError) -> Raised {
        let class = match &error {
            EngineError::InUse { .. } => "StoreInUseError",
            EngineError::NotAnEngine { .. }
            | EngineError::IncompatibleFormat { .. }
            | EngineError::Missing { .. } => "NotAStoreError",
            EngineError::UnknownNamespace(_) => "UnknownNamespaceError",
            EngineError::NamespaceExists(_) => "NamespaceExistsError",
            EngineError::UnknownSpace(_) => "UnknownSpaceError",
            EngineError::RecordNotFound { .. } => "RecordNotFoundError",
            EngineError::NonUtf8Path { .. }
            | EngineError::InvalidNamespaceName { .. }
            | EngineError::InvalidSpace { .. }
            | EngineError::SpaceConflict { .. }
            | EngineError::DimensionMismatch { .. }
            | EngineError::NonFiniteVector { .. }
            | EngineError::InvalidQuery { .. }
            | EngineError::EmptyRecord
            | EngineError::TextTooLarge { .. }
            | EngineError::Encode { .. } => "InvalidInputError",
            _ => "StorageError",
        };
        Raised::new(class, error.to_string())
    }
}

impl From<EmbedError> for Raised {
    fn from(error: EmbedError) -> Raised {
        Raised::new("EmbeddingError", error.to_string())
    }
}

impl From<MemoryError> for Raised {
    fn from(error: MemoryError) -> Raised {
        match error {
            MemoryError::Engine(error) => error.into(),
            MemoryError::Embed(error) => error.into(),
            MemoryError::Llm(error) => Raised::new("ModelError", error.to_string()),
            other => Raised::new("InvalidInputError", other.to_string()),
        }
    }
}

impl From<Raised> for PyErr {
    fn from(raised: Raised) -> PyErr {
        Python::attach(|py| match class(py, raised.class) {
            Ok(class) => PyErr::from_type(class, raised.message),
            Err(error) => error,
        })
    }
}

/// The exception class `name` of `memorybench.errors`, imported once per process.
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = MODULE.get_or_try_init(py, || {
        PyModule::import(py, ERRORS_MODULE).map(Bound::unbind)
    })?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// What every binding returns: a value or an exception for Python.
pub type PyResultOf<T> = Result<T, Raised>;
