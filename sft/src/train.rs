//! The training loop of upstream's `train_sft_lora.py`: epochs over the examples shuffled anew
//! each epoch, batches whose loss is the mean over all their learned tokens, AdamW on the
//! adapters, a step skipped when its loss is not finite, and a checkpoint after every epoch.
//!
//! A batch is run one example at a time (no padding) and its gradients summed, each example's
//! loss divided by the batch's learned tokens: the same gradient as upstream's padded batch,
//! with the memory of one sequence. Each epoch's shuffle and dropout come from a generator
//! seeded by the run's seed and the epoch, so a resumed run repeats them.

use std::time::Instant;

use candle_core::Tensor;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::checkpoint::{RunDir, RunState, StepRecord};
use crate::data::Example;
use crate::error::{Result, SftError};
use crate::lora::{Dropout, LoraSettings};
use crate::model::LoraLlama;
use crate::optim::{AdamW, AdamWSettings};
use crate::schedule::Schedule;

/// Most epochs accepted.
pub const MAX_EPOCHS: usize = 10_000;
/// Largest batch accepted.
pub const MAX_BATCH: usize = 65_536;

/// How a run trains (upstream's defaults, but the schedule: see [`Schedule::Constant`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainSettings {
    /// Peak learning rate (upstream: 1e-4).
    pub learning_rate: f64,
    /// Passes over the examples (upstream: 5).
    pub epochs: usize,
    /// Examples per optimizer step (upstream: 4).
    pub batch_size: usize,
    /// Longest example in tokens; longer ones are cut (upstream: 8192).
    pub max_length: usize,
    /// The adapters (upstream: r 8, alpha 32, dropout 0.05 on q and v).
    pub lora: LoraSettings,
    /// The optimizer (upstream: weight decay 0.01).
    pub adamw: AdamWSettings,
    /// The learning-rate schedule.
    pub schedule: Schedule,
    /// Share of the steps spent warming up under [`Schedule::Cosine`] (upstream's flag: 0.1).
    pub warmup_ratio: f64,
    /// Seeds the adapters' start, the shuffles and the dropout (upstream: 42).
    pub seed: u64,
}

impl Default for TrainSettings {
    fn default() -> Self {
        TrainSettings {
            learning_rate: 1e-4,
            epochs: 5,
            batch_size: 4,
            max_length: 8192,
            lora: LoraSettings::default(),
            adamw: AdamWSettings::default(),
            schedule: Schedule::Constant,
            warmup_ratio: 0.1,
            seed: 42,
        }
    }
}

impl TrainSettings {
    /// Refuses values no run can have, naming the setting.
    pub fn check(&self) -> Result<()> {
        let bad = |field: &'static str, reason: String| Err(SftError::Setting { field, reason });
        if !(self.learning_rate.is_finite()
            && self.learning_rate > 0.0
            && self.learning_rate <= 1.0)
        {
            return bad(
                "learning_rate",
                format!("{} is not within (0, 1]", self.learning_rate),
            );
        }
        if !(1..=MAX_EPOCHS).contains(&self.epochs) {
            return bad(
                "epochs",
                format!("{} is not within 1..={MAX_EPOCHS}", self.epochs),
            );
        }
        if !(1..=MAX_BATCH).contains(&self.batch_size) {
            return bad(
                "batch_size",
                format!("{} is not within 1..={MAX_BATCH}", self.batch_size),
            );
        }
        if !(0.0..1.0).contains(&self.warmup_ratio) {
            return bad(
                "warmup_ratio",
                format!("{} is not within [0, 1)", self.warmup_ratio),
            );
        }
        let w = self.adamw.weight_decay;
        if !(w.is_finite() && (0.0..1.0).contains(&w)) {
            return bad("weight_decay", format!("{w} is not within [0, 1)"));
        }
        self.lora.check()
    }
}

/// Trains `model`'s adapters on `examples`, checkpointing into `run` after every epoch and
/// continuing after the last complete checkpoint found there. `on_step` sees every step.
pub fn train(
    model: &LoraLlama,
    examples: &[Example],
    settings: &TrainSettings,
    run: &RunDir,
    on_step: &mut dyn FnMut(&StepRecord),
) -> Result<RunState> {
    settings.check()?;
    if examples.is_empty() {
        return Err(SftError::NoTrainingData(
            "no example to train on".to_string(),
        ));
    }
    let vars: Vec<_> = model
        .adapters()
        .into_iter()
        .flat_map(|(_, lora)| [lora.a.clone(), lora.b.clone()])
        .collect();
    let mut optimizer = AdamW::new(vars.clone(), settings.adamw)?;
    let mut state = run.resume(model, &mut optimizer)?;
    let per_epoch = examples.len().div_ceil(settings.batch_size);
    let total = per_epoch * settings.epochs;
    for epoch in state.epochs_done + 1..=settings.epochs {
        let mut rng = StdRng::seed_from_u64(settings.seed ^ (epoch as u64).rotate_left(32));
        let mut order: Vec<usize> = (0..examples.len()).collect();
        order.shuffle(&mut rng);
        let mut dropout = Dropout {
            p: settings.lora.dropout,
            rng,
        };
        for batch in order.chunks(settings.batch_size) {
            let started = Instant::now();
            let step = state.steps.len();
            let learning_rate =
                settings
                    .schedule
                    .rate(settings.learning_rate, step, total, settings.warmup_ratio);
            let batch: Vec<&Example> = batch.iter().map(|&i| &examples[i]).collect();
            let (loss, grads) = batch_gradients(model, &batch, &vars, &mut dropout)?;
            let skipped = !loss.is_finite();
            if skipped {
                tracing::warn!("step {}: loss {loss} is not finite; step skipped", step + 1);
            } else {
                optimizer.step(&grads, learning_rate)?;
            }
            let record = StepRecord {
                epoch,
                step: step + 1,
                loss,
                learning_rate,
                learned_tokens: batch.iter().map(|e| e.learned()).sum(),
                seconds: started.elapsed().as_secs_f64(),
                skipped,
            };
            on_step(&record);
            state.steps.push(record);
        }
        state.epochs_done = epoch;
        run.save(model, &optimizer, &state)?;
    }
    run.write_logs(&state)?;
    Ok(state)
}

/// The batch's mean loss per learned token and its gradient for each of `vars`.
fn batch_gradients(
    model: &LoraLlama,
    batch: &[&Example],
    vars: &[candle_core::Var],
    dropout: &mut Dropout,
) -> Result<(f64, Vec<Tensor>)> {
    let learned: usize = batch.iter().map(|e| e.learned()).sum();
    let mut sums: Vec<Tensor> = vars
        .iter()
        .map(|v| v.as_tensor().zeros_like())
        .collect::<Result<_, _>>()?;
    let mut loss = 0.0;
    for example in batch {
        let share =
            (model.nll_sum(&example.ids, &example.targets, Some(dropout))? / learned as f64)?;
        loss += f64::from(share.to_scalar::<f32>()?);
        let grads = share.backward()?;
        for (sum, var) in sums.iter_mut().zip(vars) {
            if let Some(grad) = grads.get(var.as_tensor()) {
                *sum = (&*sum + grad)?;
            }
        }
    }
    Ok((loss, sums))
}
