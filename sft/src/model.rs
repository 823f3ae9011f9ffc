//! A Llama model with LoRA on its query and value projections, forward and backward on candle.
//!
//! The base weights are the GGUF's, dequantized to f32 and frozen; only the adapters are
//! [`Var`](candle_core::Var)s. The forward follows llama.cpp's `llama` graph for a GGUF: RMS
//! norm, rotary embeddings on interleaved pairs (the GGUF's query and key rows are already
//! permuted for it, so an adapter trained here is in the GGUF's row order), grouped-query
//! attention with a causal mask, SwiGLU, and the output head (tied to the token embeddings when
//! the file has no `output.weight`). Every operation is one candle differentiates: its fused
//! softmax, RMS norm and rope kernels have no backward pass and would cut the gradient.
//!
//! The base weights' products are [`frozen_matmul`]s, which compute no weight gradients.
//!
//! Sequences are run one at a time, without padding; the loss is computed only where a token
//! is learned, so the `[tokens, vocab]` logits of the prompt are never built.

use candle_core::{Device, Tensor, D};
use candle_nn::ops::{rms_norm_slow, softmax};
use candle_nn::rotary_emb::rope_i_slow;
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::config::LlamaConfig;
use crate::error::Result;
use crate::frozen::frozen_matmul;
use crate::lora::{Dropout, Lora, LoraSettings};
use crate::weights::Weights;

/// A frozen Llama model with trainable adapters.
pub struct LoraLlama {
    config: LlamaConfig,
    lora: LoraSettings,
    device: Device,
    /// Token embeddings `[vocab, hidden]`.
    embed: Tensor,
    /// The output head, transposed: `[hidden, vocab]`.
    head_t: Tensor,
    norm: Tensor,
    blocks: Vec<Block>,
}

/// One transformer block; `*_t` weights are stored transposed (`[in, out]`) so a projection is
/// one matrix product.
struct Block {
    attn_norm: Tensor,
    q_t: Tensor,
    k_t: Tensor,
    v_t: Tensor,
    o_t: Tensor,
    ffn_norm: Tensor,
    gate_t: Tensor,
    up_t: Tensor,
    down_t: Tensor,
    lora_q: Lora,
    lora_v: Lora,
}

/// A sequence's learned positions: the position before each learned token, and the token.
pub struct Targets {
    /// Positions whose next token is learned.
    pub positions: Vec<u32>,
    /// The learned tokens.
    pub tokens: Vec<u32>,
}

impl LoraLlama {
    /// The model `file` holds (a GGUF file, or a safetensors directory) with fresh adapters
    /// drawn from `seed`.
    pub fn load(
        file: &mut impl Weights,
        lora: LoraSettings,
        seed: u64,
        device: &Device,
    ) -> Result<LoraLlama> {
        lora.check()?;
        let config = file.config()?;
        let mut rng = StdRng::seed_from_u64(seed);
        let transposed = |file: &mut dyn Weights, name: &str| -> Result<Tensor> {
            Ok(file.tensor_f32(name, device)?.t()?.contiguous()?)
        };
        let embed = file.tensor_f32("token_embd.weight", device)?;
        let head_t = if file.has("output.weight") {
            transposed(file, "output.weight")?
        } else {
            embed.t()?.contiguous()?
        };
        let norm = file.tensor_f32("output_norm.weight", device)?;
        let mut blocks = Vec::with_capacity(config.layers);
        for layer in 0..config.layers {
            let name = |part: &str| format!("blk.{layer}.{part}.weight");
            blocks.push(Block {
                attn_norm: file.tensor_f32(&name("attn_norm"), device)?,
                q_t: transposed(file, &name("attn_q"))?,
                k_t: transposed(file, &name("attn_k"))?,
                v_t: transposed(file, &name("attn_v"))?,
                o_t: transposed(file, &name("attn_output"))?,
                ffn_norm: file.tensor_f32(&name("ffn_norm"), device)?,
                gate_t: transposed(file, &name("ffn_gate"))?,
                up_t: transposed(file, &name("ffn_up"))?,
                down_t: transposed(file, &name("ffn_down"))?,
                lora_q: Lora::new(config.hidden, config.hidden, lora.rank, &mut rng, device)?,
                lora_v: Lora::new(
                    config.hidden,
                    config.kv_width(),
                    lora.rank,
                    &mut rng,
                    device,
                )?,
            });
        }
        let model = LoraLlama {
            config,
            lora,
            device: device.clone(),
            embed,
            head_t,
            norm,
            blocks,
        };
        model.check_shapes(file)?;
        Ok(model)
    }

    /// The model's shape.
    pub fn config(&self) -> &LlamaConfig {
        &self.config
    }

    /// The adapters' shape.
    pub fn lora_settings(&self) -> &LoraSettings {
        &self.lora
    }

    /// The device the model computes on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Every adapter, by the name of the GGUF weight it adapts (`blk.N.attn_q.weight`).
    pub fn adapters(&self) -> Vec<(String, &Lora)> {
        let mut adapters = Vec::with_capacity(self.blocks.len() * 2);
        for (layer, block) in self.blocks.iter().enumerate() {
            adapters.push((format!("blk.{layer}.attn_q.weight"), &block.lora_q));
            adapters.push((format!("blk.{layer}.attn_v.weight"), &block.lora_v));
        }
        adapters
    }

    /// The summed negative log-likelihood of `targets` given `ids` (differentiable in the
    /// adapters), with adapter dropout drawn from `dropout` when training.
    pub fn nll_sum(
        &self,
        ids: &[u32],
        targets: &Targets,
        dropout: Option<&mut Dropout>,
    ) -> Result<Tensor> {
        let hidden = self.hidden(ids, dropout)?;
        let positions = Tensor::new(targets.positions.as_slice(), &self.device)?;
        let chosen = hidden.index_select(&positions, 0)?;
        let logits = frozen_matmul(&chosen, &self.head_t)?;
        let log_probs = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
        let tokens = Tensor::new(targets.tokens.as_slice(), &self.device)?.unsqueeze(1)?;
        Ok(log_probs.gather(&tokens, 1)?.sum_all()?.neg()?)
    }

    /// The next-token logits after `ids` (no dropout), for checks against other runtimes.
    pub fn next_logits(&self, ids: &[u32]) -> Result<Vec<f32>> {
        let hidden = self.hidden(ids, None)?;
        let last = hidden.narrow(0, ids.len() - 1, 1)?;
        Ok(frozen_matmul(&last, &self.head_t)?
            .flatten_all()?
            .to_vec1()?)
    }

    /// The final hidden states `[tokens, hidden]` of `ids`.
    fn hidden(&self, ids: &[u32], mut dropout: Option<&mut Dropout>) -> Result<Tensor> {
        let tokens = ids.len();
        let ids = Tensor::new(ids, &self.device)?;
        let mut x = self.embed.index_select(&ids, 0)?;
        let (cos, sin) = self.rope_tables(tokens)?;
        let mask = causal_mask(tokens, &self.device)?;
        for block in &self.blocks {
            x = self.block(block, &x, &cos, &sin, &mask, dropout.as_deref_mut())?;
        }
        Ok(rms_norm_slow(&x, &self.norm, self.config.rms_eps)?)
    }

    fn block(
        &self,
        block: &Block,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: &Tensor,
        mut dropout: Option<&mut Dropout>,
    ) -> Result<Tensor> {
        let c = &self.config;
        let (tokens, head_dim) = (x.dim(0)?, c.head_dim());
        let scale = self.lora.scale();
        let h = rms_norm_slow(x, &block.attn_norm, c.rms_eps)?;
        let q = (frozen_matmul(&h, &block.q_t)?
            + block.lora_q.update(&h, scale, dropout.as_deref_mut())?)?;
        let k = frozen_matmul(&h, &block.k_t)?;
        let v = (frozen_matmul(&h, &block.v_t)? + block.lora_v.update(&h, scale, dropout)?)?;
        let heads = |t: Tensor, n: usize| -> Result<Tensor> {
            Ok(t.reshape((tokens, n, head_dim))?
                .transpose(0, 1)?
                .contiguous()?
                .unsqueeze(0)?)
        };
        let q = rope_i_slow(&heads(q, c.heads)?, cos, sin)?.squeeze(0)?;
        let k = rope_i_slow(&heads(k, c.kv_heads)?, cos, sin)?.squeeze(0)?;
        let v = heads(v, c.kv_heads)?.squeeze(0)?;
        let (k, v) = (self.repeat_kv(k)?, self.repeat_kv(v)?);
        let scores = (q.matmul(&k.t()?)? / (head_dim as f64).sqrt())?;
        let weights = softmax(&scores.broadcast_add(mask)?, D::Minus1)?;
        let attended = weights
            .matmul(&v)?
            .transpose(0, 1)?
            .reshape((tokens, c.hidden))?;
        let x = (x + frozen_matmul(&attended, &block.o_t)?)?;
        let h = rms_norm_slow(&x, &block.ffn_norm, c.rms_eps)?;
        let gated = (frozen_matmul(&h, &block.gate_t)?.silu()? * frozen_matmul(&h, &block.up_t)?)?;
        Ok((x + frozen_matmul(&gated, &block.down_t)?)?)
    }

    /// Key/value heads `[kv_heads, tokens, head_dim]` repeated for their query heads.
    fn repeat_kv(&self, t: Tensor) -> Result<Tensor> {
        let groups = self.config.heads / self.config.kv_heads;
        if groups == 1 {
            return Ok(t);
        }
        let (kv, tokens, head_dim) = t.dims3()?;
        Ok(t.unsqueeze(1)?
            .broadcast_as((kv, groups, tokens, head_dim))?
            .contiguous()?
            .reshape((kv * groups, tokens, head_dim))?)
    }

    /// The rotary tables `[tokens, head_dim/2]`: angle `position · base^(-2i/head_dim)`.
    fn rope_tables(&self, tokens: usize) -> Result<(Tensor, Tensor)> {
        let head_dim = self.config.head_dim();
        let base = f64::from(self.config.rope_base);
        let mut angles = Vec::with_capacity(tokens * head_dim / 2);
        for position in 0..tokens {
            for i in 0..head_dim / 2 {
                let frequency = base.powf(-2.0 * i as f64 / head_dim as f64);
                angles.push((position as f64 * frequency) as f32);
            }
        }
        let angles = Tensor::from_vec(angles, (tokens, head_dim / 2), &self.device)?;
        Ok((angles.cos()?, angles.sin()?))
    }

    /// Refuses a file whose tensors do not have the shapes its metadata gives.
    fn check_shapes(&self, file: &dyn Weights) -> Result<()> {
        let c = &self.config;
        let mut expected = vec![
            (
                "token_embd.weight".to_string(),
                &self.embed,
                vec![c.vocab, c.hidden],
            ),
            ("output".to_string(), &self.head_t, vec![c.hidden, c.vocab]),
        ];
        for (layer, b) in self.blocks.iter().enumerate() {
            for (part, tensor, dims) in [
                ("attn_q", &b.q_t, [c.hidden, c.hidden]),
                ("attn_k", &b.k_t, [c.hidden, c.kv_width()]),
                ("attn_v", &b.v_t, [c.hidden, c.kv_width()]),
                ("attn_output", &b.o_t, [c.hidden, c.hidden]),
                ("ffn_gate", &b.gate_t, [c.hidden, c.ffn]),
                ("ffn_up", &b.up_t, [c.hidden, c.ffn]),
                ("ffn_down", &b.down_t, [c.ffn, c.hidden]),
            ] {
                expected.push((format!("blk.{layer}.{part}.weight"), tensor, dims.to_vec()));
            }
        }
        for (name, tensor, dims) in expected {
            if tensor.dims() != dims.as_slice() {
                return Err(crate::SftError::gguf(
                    file.path(),
                    format!(
                        "{name} has shape {:?}, the metadata implies {dims:?} (transposed)",
                        tensor.dims()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `[tokens, tokens]`: 0 where a position may attend (itself and before), -inf after.
fn causal_mask(tokens: usize, device: &Device) -> Result<Tensor> {
    let mask: Vec<f32> = (0..tokens)
        .flat_map(|i| (0..tokens).map(move |j| if j <= i { 0.0 } else { f32::NEG_INFINITY }))
        .collect();
    Ok(Tensor::from_vec(mask, (tokens, tokens), device)?)
}
