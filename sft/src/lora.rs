//! Low-rank adapters (LoRA): `W·x + (alpha/r)·B·A·dropout(x)`, as PEFT adds them to the
//! attention projections upstream trains (`q_proj`, `v_proj`).
//!
//! A starts as PEFT's kaiming-uniform (`U(±1/√in)`), B as zeros, so an untrained adapter leaves
//! the model as it was. Randomness (A's start and the dropout masks) comes from a seeded
//! `StdRng`: candle's CPU generator cannot be seeded, and a run must be repeatable.

use candle_core::{DType, Device, Tensor, Var};
use rand::rngs::StdRng;
use rand::Rng;

use crate::error::{Result, SftError};

/// Largest rank accepted (a rank beyond the model's width adapts nothing more).
pub const MAX_RANK: usize = 4096;

/// The shape of the adapters (upstream: r 8, alpha 32, dropout 0.05).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoraSettings {
    /// Rank r of each adapter.
    pub rank: usize,
    /// Scaling numerator: the update is scaled by `alpha / rank`.
    pub alpha: f32,
    /// Probability of dropping an input feature of an adapter while training.
    pub dropout: f32,
}

impl Default for LoraSettings {
    fn default() -> Self {
        LoraSettings {
            rank: 8,
            alpha: 32.0,
            dropout: 0.05,
        }
    }
}

impl LoraSettings {
    /// Refuses values no adapter can have.
    pub fn check(&self) -> Result<()> {
        if !(1..=MAX_RANK).contains(&self.rank) {
            return Err(SftError::Setting {
                field: "lora_r",
                reason: format!("{} is not within 1..={MAX_RANK}", self.rank),
            });
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0 && self.alpha <= 1e6) {
            return Err(SftError::Setting {
                field: "lora_alpha",
                reason: format!("{} is not a positive number up to 1e6", self.alpha),
            });
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(SftError::Setting {
                field: "lora_dropout",
                reason: format!("{} is not within [0, 1)", self.dropout),
            });
        }
        Ok(())
    }

    /// The factor the adapter's product is scaled by.
    pub fn scale(&self) -> f64 {
        f64::from(self.alpha) / self.rank as f64
    }
}

/// One adapter: A `[rank, in]` and B `[out, rank]`, trained; the base weight is not.
pub struct Lora {
    /// Down-projection (PEFT's `lora_A.weight`; llama.cpp's `lora_a`).
    pub a: Var,
    /// Up-projection (PEFT's `lora_B.weight`; llama.cpp's `lora_b`).
    pub b: Var,
}

impl Lora {
    /// A fresh adapter from `in_dim` to `out_dim`: A random, B zero.
    pub fn new(
        in_dim: usize,
        out_dim: usize,
        rank: usize,
        rng: &mut StdRng,
        device: &Device,
    ) -> Result<Lora> {
        let bound = 1.0 / (in_dim as f32).sqrt();
        let start: Vec<f32> = (0..rank * in_dim)
            .map(|_| rng.random_range(-bound..bound))
            .collect();
        let a = Var::from_tensor(&Tensor::from_vec(start, (rank, in_dim), device)?)?;
        let b = Var::zeros((out_dim, rank), DType::F32, device)?;
        Ok(Lora { a, b })
    }

    /// The adapter's update of `x` (`[tokens, in]`), dropout applied when `dropout` is given.
    pub fn update(&self, x: &Tensor, scale: f64, dropout: Option<&mut Dropout>) -> Result<Tensor> {
        let x = match dropout {
            Some(dropout) => dropout.apply(x)?,
            None => x.clone(),
        };
        let down = x.matmul(&self.a.as_tensor().t()?)?;
        Ok((down.matmul(&self.b.as_tensor().t()?)? * scale)?)
    }
}

/// Inverted dropout with masks drawn from a seeded generator.
pub struct Dropout {
    /// Probability of dropping a feature.
    pub p: f32,
    /// Where the masks come from.
    pub rng: StdRng,
}

impl Dropout {
    /// `x` with each value zeroed with probability `p` and the rest scaled by `1/(1-p)`.
    fn apply(&mut self, x: &Tensor) -> Result<Tensor> {
        if self.p == 0.0 {
            return Ok(x.clone());
        }
        let keep = 1.0 / (1.0 - self.p);
        let mask: Vec<f32> = (0..x.elem_count())
            .map(|_| {
                if self.rng.random::<f32>() < self.p {
                    0.0
                } else {
                    keep
                }
            })
            .collect();
        let mask = Tensor::from_vec(mask, x.shape(), x.device())?;
        Ok(x.mul(&mask)?)
    }
}
