//! Python values as JSON (state values are kept as JSON text; messages are read through
//! serde), through Python's own `json` module so that what Python can serialize is exactly
//! what is accepted.

use pyo3::prelude::*;

use crate::errors::Raised;

/// `value` as strict JSON text (no NaN); a value `json.dumps` refuses raises
/// `InvalidInputError`.
pub fn to_text(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = to_value(py, value)?.to_string();
    Ok(text)
}

/// `value` as a JSON value; a value `json.dumps` refuses raises `InvalidInputError`.
pub fn to_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    let json = PyModule::import(py, "json")?;
    let text: String = match json.call_method1("dumps", (value,)) {
        Ok(text) => text.extract()?,
        Err(error) => {
            return Err(Raised::new(
                "InvalidInputError",
                format!("state values must be JSON-serializable: {error}"),
            )
            .into())
        }
    };
    serde_json::from_str(&text)
        .map_err(|error| Raised::new("InvalidInputError", format!("state value: {error}")).into())
}

/// A JSON value as the Python object `json.loads` makes of it.
pub fn to_python<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    parse(py, &value.to_string())
}

/// JSON text as the Python object `json.loads` makes of it.
pub fn parse<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let json = PyModule::import(py, "json")?;
    json.call_method1("loads", (text,))
}
