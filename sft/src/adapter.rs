//! LoRA adapters as llama.cpp reads them (`llama_adapter_lora_init`): a GGUF of
//! `general.type = adapter`, `adapter.type = lora`, `adapter.lora.alpha`, and for every adapted
//! weight `<name>.lora_a` (`[rank, in]`) and `<name>.lora_b` (`[out, rank]`) in f32. llama.cpp
//! then computes `W·x + scale·(alpha/rank)·B·A·x`, as training did.

use std::path::Path;

use candle_core::quantized::gguf_file::{self, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use mb_core::atomic_file::{partial_path, AtomicFile};

use crate::config::ARCHITECTURE;
use crate::error::{Result, SftError};
use crate::gguf::GgufFile;
use crate::model::LoraLlama;

/// Suffixes llama.cpp gives the two halves of an adapter.
const SUFFIX_A: &str = ".lora_a";
const SUFFIX_B: &str = ".lora_b";

/// Writes `model`'s adapters to `path` (whole or not at all: [`AtomicFile`]), for
/// [`ARCHITECTURE`] models (llama.cpp checks it against the base model's).
pub fn write_adapter(model: &LoraLlama, path: &Path) -> Result<()> {
    let alpha = Value::F32(model.lora_settings().alpha);
    let general_type = Value::String("adapter".to_string());
    let arch = Value::String(ARCHITECTURE.to_string());
    let adapter_type = Value::String("lora".to_string());
    let metadata = [
        ("general.type", &general_type),
        ("general.architecture", &arch),
        ("adapter.type", &adapter_type),
        ("adapter.lora.alpha", &alpha),
    ];
    let mut tensors = Vec::new();
    for (name, lora) in model.adapters() {
        let a = QTensor::quantize(lora.a.as_tensor(), GgmlDType::F32)?;
        let b = QTensor::quantize(lora.b.as_tensor(), GgmlDType::F32)?;
        tensors.push((format!("{name}{SUFFIX_A}"), a));
        tensors.push((format!("{name}{SUFFIX_B}"), b));
    }
    let tensors: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let partial = partial_path(path);
    let mut file = AtomicFile::create(path).map_err(|e| SftError::io(&partial, e))?;
    gguf_file::write(&mut file, &metadata, &tensors)
        .map_err(|e| SftError::gguf(&partial, format!("writing the adapter: {e}")))?;
    file.commit().map_err(|e| SftError::io(path, e))
}

/// Sets `model`'s adapters to those of the adapter file `path` (a checkpoint being resumed),
/// refusing one whose names, rank or shapes differ.
pub fn read_adapter(model: &LoraLlama, path: &Path) -> Result<()> {
    let mut file = GgufFile::open(path)?;
    if file.string("adapter.type")? != "lora" {
        return Err(SftError::gguf(path, "not a LoRA adapter"));
    }
    let alpha = file.f32("adapter.lora.alpha")?;
    if alpha != model.lora_settings().alpha {
        return Err(SftError::gguf(
            path,
            format!(
                "alpha {alpha}, the run's is {}",
                model.lora_settings().alpha
            ),
        ));
    }
    for (name, lora) in model.adapters() {
        for (suffix, var) in [(SUFFIX_A, &lora.a), (SUFFIX_B, &lora.b)] {
            let tensor = file.tensor_f32(&format!("{name}{suffix}"), model.device())?;
            if tensor.dims() != var.dims() {
                return Err(SftError::gguf(
                    path,
                    format!(
                        "{name}{suffix} has shape {:?}, the model's adapter {:?}",
                        tensor.dims(),
                        var.dims()
                    ),
                ));
            }
            var.set(&tensor)?;
        }
    }
    Ok(())
}
