//! AdamW as torch implements it (decoupled weight decay, bias-corrected moments), with its
//! state visible so that a checkpoint can hold it and a resumed run continue exactly.

use candle_core::{Tensor, Var};

use crate::error::Result;

/// Optimizer constants (torch's defaults but the learning rate and decay).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdamWSettings {
    /// Weight decay (upstream: 0.01).
    pub weight_decay: f64,
    /// First-moment decay.
    pub beta1: f64,
    /// Second-moment decay.
    pub beta2: f64,
    /// Added to the denominator.
    pub eps: f64,
}

impl Default for AdamWSettings {
    fn default() -> Self {
        AdamWSettings {
            weight_decay: 0.01,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }
}

/// AdamW over a fixed list of variables.
pub struct AdamW {
    settings: AdamWSettings,
    params: Vec<Var>,
    /// First moments, one per variable.
    pub(crate) m: Vec<Tensor>,
    /// Second moments, one per variable.
    pub(crate) v: Vec<Tensor>,
    /// Steps taken.
    pub(crate) steps: u64,
}

impl AdamW {
    /// A fresh optimizer of `params`.
    pub fn new(params: Vec<Var>, settings: AdamWSettings) -> Result<AdamW> {
        let m = params
            .iter()
            .map(|p| p.as_tensor().zeros_like())
            .collect::<Result<Vec<_>, _>>()?;
        let v = m.clone();
        Ok(AdamW {
            settings,
            params,
            m,
            v,
            steps: 0,
        })
    }

    /// One step at learning rate `lr` with `grads[i]` the gradient of variable `i`.
    pub fn step(&mut self, grads: &[Tensor], lr: f64) -> Result<()> {
        let s = self.settings;
        self.steps += 1;
        let t = self.steps as i32;
        let correction1 = 1.0 - s.beta1.powi(t);
        let correction2 = 1.0 - s.beta2.powi(t);
        for (i, (param, grad)) in self.params.iter().zip(grads).enumerate() {
            let m = ((&self.m[i] * s.beta1)? + (grad * (1.0 - s.beta1))?)?;
            let v = ((&self.v[i] * s.beta2)? + (grad.sqr()? * (1.0 - s.beta2))?)?;
            let denominator = ((v.sqrt()? / correction2.sqrt())? + s.eps)?;
            let update = ((&m / denominator)? * (lr / correction1))?;
            let decayed = (param.as_tensor() * (1.0 - lr * s.weight_decay))?;
            param.set(&(decayed - update)?)?;
            self.m[i] = m;
            self.v[i] = v;
        }
        Ok(())
    }
}
