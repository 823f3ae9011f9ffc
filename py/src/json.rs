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

/// `value` as a JSON value read object by object, so that a float arrives with exactly its
/// bits (a trip through JSON text would round it again): dicts with text keys, lists and
/// tuples, text, integers, floats, booleans and `None`; anything else goes through
/// [`to_value`].
pub fn to_exact_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
    use serde_json::Value;
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(int) = value.cast::<PyInt>() {
        if let Ok(n) = int.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = int.extract::<u64>() {
            return Ok(Value::from(n));
        }
        return to_value(py, value);
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return serde_json::Number::from_f64(float.value())
            .map(Value::Number)
            .ok_or_else(|| {
                Raised::new("InvalidInputError", "NaN and infinities are not JSON").into()
            });
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Value::String(text.extract::<String>()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = serde_json::Map::new();
        for (key, item) in dict.iter() {
            let key = key.cast::<PyString>().map_err(|_| {
                Raised::new("InvalidInputError", format!("dict key {key} is not text"))
            })?;
            map.insert(key.extract::<String>()?, to_exact_value(py, &item)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(list) = value.cast::<PyList>() {
        return list.iter().map(|item| to_exact_value(py, &item)).collect();
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return tuple.iter().map(|item| to_exact_value(py, &item)).collect();
    }
    to_value(py, value)
}
