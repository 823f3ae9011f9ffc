//! Where a base model's weights come from: a GGUF file, or a Hugging Face safetensors directory
//! converted on load to the GGUF's names and row order, so the model and its adapters are the
//! same whichever the source (an adapter trained on the safetensors is served on the GGUF
//! `convert_hf_to_gguf.py` makes of them).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use serde::Deserialize;

use crate::config::{LlamaConfig, ARCHITECTURE};
use crate::error::{Result, SftError};
use crate::gguf::GgufFile;

/// A base model's shape and weights, by their GGUF names (`blk.N.attn_q.weight`, ...).
pub trait Weights {
    /// The model's file or directory.
    fn path(&self) -> &Path;
    /// Its shape.
    fn config(&self) -> Result<LlamaConfig>;
    /// Whether it holds the weight `name`.
    fn has(&self, name: &str) -> bool;
    /// The weight `name` in f32, row-major (`[out, in]`), rows in the GGUF's order.
    fn tensor_f32(&mut self, name: &str, device: &Device) -> Result<Tensor>;
}

impl Weights for GgufFile {
    fn path(&self) -> &Path {
        GgufFile::path(self)
    }

    fn config(&self) -> Result<LlamaConfig> {
        LlamaConfig::from_gguf(self)
    }

    fn has(&self, name: &str) -> bool {
        self.has_tensor(name)
    }

    fn tensor_f32(&mut self, name: &str, device: &Device) -> Result<Tensor> {
        GgufFile::tensor_f32(self, name, device)
    }
}

/// The `config.json` keys of a Hugging Face Llama model.
#[derive(Deserialize)]
struct HfConfig {
    model_type: String,
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    num_attention_heads: usize,
    num_key_value_heads: Option<usize>,
    rope_theta: Option<f32>,
    rms_norm_eps: f32,
}

/// A Hugging Face model directory: `config.json` and `*.safetensors`.
pub struct SafetensorsModel {
    dir: PathBuf,
    config: LlamaConfig,
    tensors: HashMap<String, Tensor>,
}

impl SafetensorsModel {
    /// Reads `dir`'s configuration and every `*.safetensors` file in it (on the CPU).
    pub fn open(dir: &Path) -> Result<SafetensorsModel> {
        let config_path = dir.join("config.json");
        let text =
            std::fs::read_to_string(&config_path).map_err(|e| SftError::io(&config_path, e))?;
        let hf: HfConfig = serde_json::from_str(&text).map_err(|e| {
            SftError::gguf(&config_path, format!("not a model configuration ({e})"))
        })?;
        if hf.model_type != ARCHITECTURE {
            return Err(SftError::gguf(
                &config_path,
                format!(
                    "model_type {:?}: only llama models are trained",
                    hf.model_type
                ),
            ));
        }
        let config = LlamaConfig {
            vocab: hf.vocab_size,
            hidden: hf.hidden_size,
            layers: hf.num_hidden_layers,
            ffn: hf.intermediate_size,
            heads: hf.num_attention_heads,
            kv_heads: hf.num_key_value_heads.unwrap_or(hf.num_attention_heads),
            rope_base: hf.rope_theta.unwrap_or(10_000.0),
            rms_eps: hf.rms_norm_eps,
        };
        config
            .check()
            .map_err(|reason| SftError::gguf(&config_path, reason))?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| SftError::io(dir, e))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(SftError::gguf(dir, "no *.safetensors file"));
        }
        let mut tensors = HashMap::new();
        for file in &files {
            let read = candle_core::safetensors::load(file, &Device::Cpu)
                .map_err(|e| SftError::gguf(file, format!("not readable safetensors ({e})")))?;
            tensors.extend(read);
        }
        Ok(SafetensorsModel {
            dir: dir.to_path_buf(),
            config,
            tensors,
        })
    }
}

impl Weights for SafetensorsModel {
    fn path(&self) -> &Path {
        &self.dir
    }

    fn config(&self) -> Result<LlamaConfig> {
        Ok(self.config.clone())
    }

    fn has(&self, name: &str) -> bool {
        hf_name(name).is_some_and(|hf| self.tensors.contains_key(&hf))
    }

    fn tensor_f32(&mut self, name: &str, device: &Device) -> Result<Tensor> {
        let hf = hf_name(name)
            .ok_or_else(|| SftError::gguf(&self.dir, format!("no weight for {name}")))?;
        let tensor = self
            .tensors
            .remove(&hf)
            .ok_or_else(|| SftError::gguf(&self.dir, format!("no tensor {hf}")))?;
        let tensor = tensor.to_dtype(DType::F32)?.to_device(device)?;
        // convert_hf_to_gguf.py reorders the query and key rows for llama.cpp's rope on
        // adjacent pairs; the model here runs that rope, on rows in that order.
        let c = &self.config;
        if name.ends_with(".attn_q.weight") {
            return to_interleaved(&tensor, c.heads);
        }
        if name.ends_with(".attn_k.weight") {
            return to_interleaved(&tensor, c.kv_heads);
        }
        Ok(tensor)
    }
}

/// The Hugging Face name of the GGUF weight `name`.
fn hf_name(name: &str) -> Option<String> {
    let top = match name {
        "token_embd.weight" => Some("model.embed_tokens.weight"),
        "output_norm.weight" => Some("model.norm.weight"),
        "output.weight" => Some("lm_head.weight"),
        _ => None,
    };
    if let Some(top) = top {
        return Some(top.to_string());
    }
    let rest = name.strip_prefix("blk.")?;
    let (layer, part) = rest.split_once('.')?;
    let hf = match part {
        "attn_norm.weight" => "input_layernorm.weight",
        "attn_q.weight" => "self_attn.q_proj.weight",
        "attn_k.weight" => "self_attn.k_proj.weight",
        "attn_v.weight" => "self_attn.v_proj.weight",
        "attn_output.weight" => "self_attn.o_proj.weight",
        "ffn_norm.weight" => "post_attention_layernorm.weight",
        "ffn_gate.weight" => "mlp.gate_proj.weight",
        "ffn_up.weight" => "mlp.up_proj.weight",
        "ffn_down.weight" => "mlp.down_proj.weight",
        _ => return None,
    };
    Some(format!("model.layers.{layer}.{hf}"))
}

/// `w`'s rows (`[heads · head_dim, in]`) reordered as `convert_hf_to_gguf.py`'s `permute`:
/// within each head, the first and second halves interleaved.
pub(crate) fn to_interleaved(w: &Tensor, heads: usize) -> Result<Tensor> {
    let (rows, columns) = w.dims2()?;
    Ok(w.reshape((heads, 2, rows / heads / 2, columns))?
        .transpose(1, 2)?
        .contiguous()?
        .reshape((rows, columns))?)
}

/// The inverse of [`to_interleaved`]: GGUF rows back in Hugging Face's order.
pub fn to_halves(w: &Tensor, heads: usize) -> Result<Tensor> {
    let (rows, columns) = w.dims2()?;
    Ok(w.reshape((heads, rows / heads / 2, 2, columns))?
        .transpose(1, 2)?
        .contiguous()?
        .reshape((rows, columns))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Tensor {
        Tensor::arange(0f32, n as f32, &Device::Cpu)
            .unwrap()
            .reshape((n, 1))
            .unwrap()
    }

    fn order(t: &Tensor) -> Vec<f32> {
        t.flatten_all().unwrap().to_vec1().unwrap()
    }

    /// convert_hf_to_gguf.py's permute: per head, row i of the first half, then row i of the
    /// second half.
    #[test]
    fn rows_are_interleaved_per_head_as_the_gguf_converter_orders_them() {
        let once = to_interleaved(&rows(4), 1).unwrap();
        assert_eq!(order(&once), [0.0, 2.0, 1.0, 3.0]);
        let two_heads = to_interleaved(&rows(8), 2).unwrap();
        assert_eq!(order(&two_heads), [0.0, 2.0, 1.0, 3.0, 4.0, 6.0, 5.0, 7.0]);
        let back = to_halves(&two_heads, 2).unwrap();
        assert_eq!(order(&back), order(&rows(8)));
    }
}
