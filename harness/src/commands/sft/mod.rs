//! `sft-train` and `sft-predict`: the SFT baseline of upstream's action-feedback experiment
//! (`src/action_feedback/train_sft_lora.py` and `predict_sft.py`).
//!
//! `sft-train` LoRA-fine-tunes the local GGUF model ([`mb_sft`]) on the first-round answers of
//! the training dialogs whose users liked (or copied) them ([`pairs`]), writing upstream's
//! layout: `action_feedback/sft_models/lr=<lr>/<set>/lora_r<r>_alpha<alpha>_<action>_only/`
//! with `epoch=<n>_ckpt/adapter.gguf` per epoch. `sft-predict` has the llama.cpp server serve
//! one of those adapters on the same model and answers the test split with `wo_memory`, as the
//! off-policy regime does, into `action_feedback/results/<type>/<set>/wo_memory/<action>/sft/
//! epoch=<n>/`.

mod pairs;
pub mod predict;
pub mod train;

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use mb_sft::{Schedule, TrainSettings};

use super::action_feedback::ImplicitAction;
use crate::error::HarnessError;

/// The training settings: a TOML file (`configs/sft/lora.toml`, upstream's defaults), and
/// flags replacing single values (each also under upstream's spelling: `--num_epochs`,
/// `--learning_rate`, `--lora_r`, ...).
#[derive(clap::Args, Debug, Clone)]
pub struct SftSettingsArgs {
    /// The settings file (relative paths are found in the current directory or above, else
    /// beside the executable or above).
    #[arg(long, value_name = "FILE", default_value = "configs/sft/lora.toml")]
    pub sft_config: PathBuf,
    /// Peak learning rate (upstream's `--learning_rate`).
    #[arg(long, alias = "learning_rate")]
    pub learning_rate: Option<f64>,
    /// Passes over the examples (upstream's `--num_epochs`).
    #[arg(long, alias = "num_epochs")]
    pub epochs: Option<usize>,
    /// Examples per optimizer step (upstream's `--batch_size`).
    #[arg(long, alias = "batch_size")]
    pub batch_size: Option<usize>,
    /// Longest example in tokens (upstream's `--max_length`).
    #[arg(long, alias = "max_length")]
    pub max_length: Option<usize>,
    /// LoRA rank.
    #[arg(long, alias = "lora_r")]
    pub lora_r: Option<usize>,
    /// LoRA alpha.
    #[arg(long, alias = "lora_alpha")]
    pub lora_alpha: Option<f32>,
    /// LoRA dropout.
    #[arg(long, alias = "lora_dropout")]
    pub lora_dropout: Option<f32>,
    /// AdamW weight decay.
    #[arg(long, alias = "weight_decay")]
    pub weight_decay: Option<f64>,
    /// Learning-rate schedule (upstream's `--lr_scheduler_type`, whose `cosine` its script
    /// never applies).
    #[arg(long, alias = "lr_scheduler_type", value_enum)]
    pub schedule: Option<ScheduleFlag>,
    /// Share of the steps warming up (cosine schedule).
    #[arg(long, alias = "warmup_ratio")]
    pub warmup_ratio: Option<f64>,
    /// Seed of the adapters' start, the shuffles and the dropout.
    #[arg(long)]
    pub seed: Option<u64>,
}

/// The values of `--schedule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScheduleFlag {
    /// See [`Schedule::Constant`].
    Constant,
    /// See [`Schedule::Cosine`].
    Cosine,
}

impl SftSettingsArgs {
    /// The file's settings under the flags, checked.
    pub fn settings(&self) -> Result<TrainSettings, HarnessError> {
        let path = mb_core::locate(&self.sft_config).ok_or_else(|| {
            HarnessError::Usage(format!(
                "no settings file {}",
                mb_core::searched(&self.sft_config)
            ))
        })?;
        let text = mb_core::files::read_text(&path, mb_core::files::SETTINGS_LIMIT)
            .map_err(|e| HarnessError::Usage(format!("{}: {e}", path.display())))?;
        let mut s: TrainSettings = mb_core::parse_toml(&text)
            .map_err(|e| HarnessError::Usage(format!("{}: {e}", path.display())))?;
        fn set<T: Copy>(target: &mut T, flag: Option<T>) {
            if let Some(value) = flag {
                *target = value;
            }
        }
        set(&mut s.learning_rate, self.learning_rate);
        set(&mut s.epochs, self.epochs);
        set(&mut s.batch_size, self.batch_size);
        set(&mut s.max_length, self.max_length);
        set(&mut s.lora.rank, self.lora_r);
        set(&mut s.lora.alpha, self.lora_alpha);
        set(&mut s.lora.dropout, self.lora_dropout);
        set(&mut s.adamw.weight_decay, self.weight_decay);
        set(&mut s.warmup_ratio, self.warmup_ratio);
        set(&mut s.seed, self.seed);
        if let Some(schedule) = self.schedule {
            s.schedule = match schedule {
                ScheduleFlag::Constant => Schedule::Constant,
                ScheduleFlag::Cosine => Schedule::Cosine,
            };
        }
        s.check()?;
        Ok(s)
    }
}

/// The directory of the training run of `settings` on `set_name` for `action`, under
/// `output_dir` (upstream's `sft_models/lr=<lr>/<set>/lora_r<r>_alpha<alpha>_<action>_only`).
pub fn model_dir(
    output_dir: &Path,
    settings: &TrainSettings,
    set_name: &str,
    action: ImplicitAction,
) -> PathBuf {
    output_dir
        .join("action_feedback/sft_models")
        .join(format!("lr={}", settings.learning_rate))
        .join(set_name)
        .join(format!(
            "lora_r{}_alpha{}_{}_only",
            settings.lora.rank,
            settings.lora.alpha,
            action.name()
        ))
}
