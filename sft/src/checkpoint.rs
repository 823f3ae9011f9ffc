//! A training run's directory, laid out as upstream's (`epoch={n}_ckpt/`,
//! `training_config.json`, `training_logs.json`), and resuming from its last checkpoint.
//!
//! Each checkpoint holds the adapter (`adapter.gguf`, what llama.cpp serves), the optimizer's
//! moments (`optimizer.safetensors`) and `state.json`, written last: a checkpoint without it
//! was interrupted and is ignored. A run started again with the same configuration continues
//! after its last complete epoch exactly as if it had not stopped (every epoch's randomness is
//! seeded by the epoch); one with another configuration is refused.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::Tensor;
use serde::{Deserialize, Serialize};

use crate::adapter::{read_adapter, write_adapter};
use crate::error::{Result, SftError};
use crate::model::LoraLlama;
use crate::optim::AdamW;

/// What a run was started with; a resumed run must match it.
pub const CONFIG: &str = "training_config.json";
/// The losses of the steps taken (upstream's `losses`, `final_loss`, `total_steps`) and every
/// step's record.
pub const LOGS: &str = "training_logs.json";
/// The adapter file in each checkpoint.
pub const ADAPTER: &str = "adapter.gguf";
const OPTIMIZER: &str = "optimizer.safetensors";
const STATE: &str = "state.json";

/// One optimizer step, as logged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Epoch, from 1.
    pub epoch: usize,
    /// Step of the run, from 1.
    pub step: usize,
    /// Mean loss over the batch's learned tokens (NaN when skipped).
    pub loss: f64,
    /// Learning rate used.
    pub learning_rate: f64,
    /// Tokens learned in the batch.
    pub learned_tokens: usize,
    /// Wall time of the step, seconds.
    pub seconds: f64,
    /// Whether the step was skipped because its loss was not finite.
    pub skipped: bool,
}

/// Where a completed epoch left the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunState {
    /// Epochs completed.
    pub epochs_done: usize,
    /// Every step so far.
    pub steps: Vec<StepRecord>,
}

/// The directory of one training run.
pub struct RunDir {
    dir: PathBuf,
}

impl RunDir {
    /// The run in `dir` (created if missing) for `config`: a new run writes it; an existing
    /// run must have been started with the same one.
    pub fn open(dir: &Path, config: &serde_json::Value) -> Result<RunDir> {
        std::fs::create_dir_all(dir).map_err(|e| SftError::io(dir, e))?;
        let path = dir.join(CONFIG);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let recorded: serde_json::Value = serde_json::from_slice(&bytes)
                    .map_err(|e| SftError::bad_file(&path, format!("not JSON ({e})")))?;
                if &recorded != config {
                    return Err(SftError::Setting {
                        field: "output",
                        reason: format!(
                            "{} holds a run started with another configuration ({}); give \
                             another output directory or remove it",
                            dir.display(),
                            path.display()
                        ),
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => write_json(&path, config)?,
            Err(e) => return Err(SftError::io(&path, e)),
        }
        Ok(RunDir {
            dir: dir.to_path_buf(),
        })
    }

    /// The run's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The checkpoint directory of `epoch` (upstream's `epoch={n}_ckpt`).
    pub fn checkpoint(&self, epoch: usize) -> PathBuf {
        self.dir.join(format!("epoch={epoch}_ckpt"))
    }

    /// The last complete checkpoint's state, loaded into `model` and `optimizer`; a fresh
    /// state when there is none.
    pub fn resume(&self, model: &LoraLlama, optimizer: &mut AdamW) -> Result<RunState> {
        let mut epoch = 1;
        let mut last = None;
        while self.checkpoint(epoch).join(STATE).exists() {
            last = Some(epoch);
            epoch += 1;
        }
        let Some(epoch) = last else {
            return Ok(RunState::default());
        };
        let dir = self.checkpoint(epoch);
        read_adapter(model, &dir.join(ADAPTER))?;
        let path = dir.join(OPTIMIZER);
        let moments = candle_core::safetensors::load(&path, model.device())
            .map_err(|e| SftError::bad_file(&path, format!("optimizer state: {e}")))?;
        let moment = |kind: &str, i: usize| -> Result<Tensor> {
            moments
                .get(&format!("{kind}.{i}"))
                .cloned()
                .ok_or_else(|| SftError::bad_file(&path, format!("no {kind}.{i}")))
        };
        for i in 0..optimizer.m.len() {
            optimizer.m[i] = moment("m", i)?;
            optimizer.v[i] = moment("v", i)?;
        }
        let state: RunState = read_json(&dir.join(STATE))?;
        optimizer.steps = state.steps.iter().filter(|s| !s.skipped).count() as u64;
        Ok(state)
    }

    /// Writes the checkpoint of the epoch `state` has just completed.
    pub fn save(&self, model: &LoraLlama, optimizer: &AdamW, state: &RunState) -> Result<()> {
        let dir = self.checkpoint(state.epochs_done);
        std::fs::create_dir_all(&dir).map_err(|e| SftError::io(&dir, e))?;
        write_adapter(model, &dir.join(ADAPTER))?;
        let mut moments = HashMap::new();
        for (i, (m, v)) in optimizer.m.iter().zip(&optimizer.v).enumerate() {
            moments.insert(format!("m.{i}"), m.clone());
            moments.insert(format!("v.{i}"), v.clone());
        }
        let path = dir.join(OPTIMIZER);
        candle_core::safetensors::save(&moments, &path)
            .map_err(|e| SftError::bad_file(&path, format!("writing the optimizer state: {e}")))?;
        write_json(&dir.join(STATE), state)?;
        self.write_logs(state)
    }

    /// Writes `training_logs.json` for the steps so far.
    pub fn write_logs(&self, state: &RunState) -> Result<()> {
        // Upstream's keys count the steps taken: a skipped one is only in `steps`.
        let losses: Vec<f64> = state
            .steps
            .iter()
            .filter(|s| !s.skipped)
            .map(|s| s.loss)
            .collect();
        let logs = serde_json::json!({
            "losses": losses,
            "final_loss": losses.last(),
            "total_steps": losses.len(),
            "steps": state.steps,
        });
        write_json(&self.dir.join(LOGS), &logs)
    }
}

/// Writes `value` as JSON to `path`, whole or not at all
/// ([`mb_core::atomic_file::write_atomic`]).
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_vec_pretty(value).map_err(|e| SftError::Setting {
        field: "json",
        reason: e.to_string(),
    })?;
    mb_core::atomic_file::write_atomic(path, &text).map_err(|e| SftError::io(path, e))
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| SftError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| SftError::bad_file(path, format!("not JSON ({e})")))
}
