//! The learning rate over the steps of a run.

use serde::{Deserialize, Serialize};

/// How the learning rate changes over training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// The same rate at every step: what upstream's script does (its `--lr_scheduler_type` and
    /// `--warmup_ratio` are parsed and never used).
    Constant,
    /// A linear warm-up over the first `warmup_ratio` of the steps, then a cosine decay to zero
    /// (transformers' `get_cosine_schedule_with_warmup`, which upstream's flags name).
    Cosine,
}

impl Schedule {
    /// The rate at `step` (0-based) of `total` steps, from the peak rate `peak`.
    pub fn rate(self, peak: f64, step: usize, total: usize, warmup_ratio: f64) -> f64 {
        match self {
            Schedule::Constant => peak,
            Schedule::Cosine => {
                let warmup = (total as f64 * warmup_ratio).ceil() as usize;
                if step < warmup {
                    return peak * step as f64 / warmup.max(1) as f64;
                }
                let progress = (step - warmup) as f64 / (total - warmup).max(1) as f64;
                peak * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_warms_up_then_decays_to_zero() {
        let rates: Vec<f64> = (0..10)
            .map(|step| Schedule::Cosine.rate(1.0, step, 10, 0.1))
            .collect();
        assert_eq!(rates[0], 0.0);
        assert_eq!(rates[1], 1.0);
        assert!(rates.windows(2).skip(1).all(|w| w[1] < w[0]), "{rates:?}");
        assert!(rates[9] < 0.05);
        assert_eq!(Schedule::Constant.rate(0.5, 7, 10, 0.1), 0.5);
    }
}
