//! Reading a GGUF model file: its metadata and its tensors, dequantized to f32.
//!
//! The base model is the same file llama.cpp serves (SmolLM2's Q4_1 GGUF by default), so what
//! is trained and what is served share weights, tokenizer and chat template.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file::{Content, Value};
use candle_core::{Device, Tensor};

use crate::error::{Result, SftError};

/// An open GGUF file.
pub struct GgufFile {
    path: PathBuf,
    reader: BufReader<File>,
    content: Content,
}

impl GgufFile {
    /// Opens `path` and reads its header (metadata and tensor directory).
    pub fn open(path: &Path) -> Result<GgufFile> {
        let file = File::open(path).map_err(|e| SftError::io(path, e))?;
        let mut reader = BufReader::new(file);
        let content = Content::read(&mut reader)
            .map_err(|e| SftError::gguf(path, format!("not a readable GGUF file ({e})")))?;
        Ok(GgufFile {
            path: path.to_path_buf(),
            reader,
            content,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every metadata key and value.
    pub fn metadata(&self) -> &HashMap<String, Value> {
        &self.content.metadata
    }

    /// The value of `key`, or an error naming it.
    pub fn value(&self, key: &str) -> Result<&Value> {
        self.content
            .metadata
            .get(key)
            .ok_or_else(|| SftError::gguf(&self.path, format!("no metadata key {key}")))
    }

    /// `key` as a non-negative integer of any width.
    pub fn usize(&self, key: &str) -> Result<usize> {
        as_usize(self.value(key)?)
            .ok_or_else(|| SftError::gguf(&self.path, format!("{key} is not a count")))
    }

    /// `key` as a float.
    pub fn f32(&self, key: &str) -> Result<f32> {
        match self.value(key)? {
            Value::F32(v) => Ok(*v),
            Value::F64(v) => Ok(*v as f32),
            _ => Err(SftError::gguf(&self.path, format!("{key} is not a float"))),
        }
    }

    /// `key` as a string.
    pub fn string(&self, key: &str) -> Result<&str> {
        match self.value(key)? {
            Value::String(s) => Ok(s),
            _ => Err(SftError::gguf(&self.path, format!("{key} is not a string"))),
        }
    }

    /// `key` as an array.
    pub fn array(&self, key: &str) -> Result<&[Value]> {
        match self.value(key)? {
            Value::Array(values) => Ok(values),
            _ => Err(SftError::gguf(&self.path, format!("{key} is not an array"))),
        }
    }

    /// Whether the file holds a tensor named `name`.
    pub fn has_tensor(&self, name: &str) -> bool {
        self.content.tensor_infos.contains_key(name)
    }

    /// The tensor `name`, dequantized to f32, in row-major order (a weight is `[out, in]`).
    pub fn tensor_f32(&mut self, name: &str, device: &Device) -> Result<Tensor> {
        if !self.has_tensor(name) {
            return Err(SftError::gguf(&self.path, format!("no tensor {name}")));
        }
        let quantized = self
            .content
            .tensor(&mut self.reader, name, device)
            .map_err(|e| SftError::gguf(&self.path, format!("tensor {name}: {e}")))?;
        quantized
            .dequantize(device)
            .map_err(|e| SftError::gguf(&self.path, format!("tensor {name}: {e}")))
    }
}

/// An integer value of any width, when it is not negative.
pub(crate) fn as_usize(value: &Value) -> Option<usize> {
    let wide: i128 = match value {
        Value::U8(v) => (*v).into(),
        Value::I8(v) => (*v).into(),
        Value::U16(v) => (*v).into(),
        Value::I16(v) => (*v).into(),
        Value::U32(v) => (*v).into(),
        Value::I32(v) => (*v).into(),
        Value::U64(v) => (*v).into(),
        Value::I64(v) => (*v).into(),
        _ => return None,
    };
    usize::try_from(wide).ok()
}
