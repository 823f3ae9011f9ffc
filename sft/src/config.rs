//! The shape of a Llama-architecture model, read from its GGUF metadata.

use crate::error::{Result, SftError};
use crate::gguf::GgufFile;

/// The architecture trained (a GGUF's `general.architecture`, a Hugging Face `model_type`).
pub const ARCHITECTURE: &str = "llama";

/// Largest dimension accepted from a file (a corrupt header must not size an allocation).
const MAX_DIM: usize = 1 << 20;

/// Hyper-parameters of a Llama model (SmolLM2's: 30 layers of width 576, 9 query heads over 3
/// key/value heads, rope base 100 000).
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaConfig {
    /// Tokens in the vocabulary.
    pub vocab: usize,
    /// Width of the residual stream.
    pub hidden: usize,
    /// Transformer blocks.
    pub layers: usize,
    /// Width of the feed-forward layer.
    pub ffn: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (grouped-query attention when fewer than `heads`).
    pub kv_heads: usize,
    /// Rotary embedding base.
    pub rope_base: f32,
    /// RMS-norm epsilon.
    pub rms_eps: f32,
}

impl LlamaConfig {
    /// The configuration of the model in `file`, which must be of the `llama` architecture.
    pub fn from_gguf(file: &GgufFile) -> Result<LlamaConfig> {
        let arch = file.string("general.architecture")?;
        if arch != ARCHITECTURE {
            return Err(SftError::gguf(
                file.path(),
                format!("architecture {arch:?}: only llama models are trained"),
            ));
        }
        let config = LlamaConfig {
            vocab: file.array("tokenizer.ggml.tokens")?.len(),
            hidden: file.usize("llama.embedding_length")?,
            layers: file.usize("llama.block_count")?,
            ffn: file.usize("llama.feed_forward_length")?,
            heads: file.usize("llama.attention.head_count")?,
            kv_heads: file.usize("llama.attention.head_count_kv")?,
            rope_base: file.f32("llama.rope.freq_base").unwrap_or(10_000.0),
            rms_eps: file.f32("llama.attention.layer_norm_rms_epsilon")?,
        };
        config
            .check()
            .map_err(|reason| SftError::gguf(file.path(), reason))?;
        Ok(config)
    }

    /// Width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.hidden / self.heads
    }

    /// Width of the keys and values together over all key/value heads.
    pub fn kv_width(&self) -> usize {
        self.kv_heads * self.head_dim()
    }

    /// Why the shape cannot be a model, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        for (name, value) in [
            ("vocab", self.vocab),
            ("hidden", self.hidden),
            ("layers", self.layers),
            ("ffn", self.ffn),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
        ] {
            if value == 0 || value > MAX_DIM {
                return Err(format!("{name} {value} is not within 1..={MAX_DIM}"));
            }
        }
        if !self.hidden.is_multiple_of(self.heads) || !self.head_dim().is_multiple_of(2) {
            return Err(format!(
                "width {} does not split into {} heads of even width",
                self.hidden, self.heads
            ));
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(format!(
                "{} query heads do not group over {} key/value heads",
                self.heads, self.kv_heads
            ));
        }
        let positive = |v: f32| v.is_finite() && v > 0.0;
        if !(positive(self.rope_base) && positive(self.rms_eps)) {
            return Err("rope base and rms epsilon must be positive".to_string());
        }
        Ok(())
    }
}
