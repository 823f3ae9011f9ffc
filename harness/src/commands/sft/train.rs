//! `sft-train`: trains the SFT baseline's adapter on the set's liked (or copied) first-round
//! answers, resuming after the last complete epoch of an interrupted run.

use std::path::PathBuf;

use mb_datasets::catalog::DatasetType;
use mb_llm::{CacheMode, LlmChoice};
use mb_sft::{
    default_device, encode_all, train, ChatTokenizer, GgufFile, LoraLlama, RunDir,
    SafetensorsModel, StepRecord,
};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::pairs::first_round_pairs;
use super::{model_dir, SftSettingsArgs};
use crate::commands::action_feedback::ImplicitAction;
use crate::commands::report::loss_chart;
use crate::data::DataArgs;
use crate::error::HarnessError;
use crate::run::progress::progress;
use crate::stdout::line;

/// Where the run's examples are written for inspection.
const TRAINING_DATA: &str = "training_data.json";
/// The loss curve, drawn after training.
const LOSS_CHART: &str = "loss.svg";

/// Arguments of `sft-train`.
#[derive(clap::Args, Debug)]
pub struct SftTrainArgs {
    /// `single`, `domain` or `task` (also `--dataset_type`).
    #[arg(long, alias = "dataset_type", default_value = "domain")]
    pub dataset_type: String,
    /// The dataset, domain or task (see `mb-harness list`; also `--set_name`).
    #[arg(long, alias = "set_name", default_value = "Sample")]
    pub set_name: String,
    /// Where the data comes from (`--data`).
    #[command(flatten)]
    pub data: DataArgs,
    /// The action whose first-round answers are learned (upstream's `--action_feedback`).
    #[arg(long, alias = "action_feedback", value_enum)]
    pub action: ImplicitAction,
    /// The base model: a llama GGUF (default: the `[server]` model of configs/llm/local.toml,
    /// the one `sft-predict --llm local` serves), or a Hugging Face directory (config.json,
    /// *.safetensors, tokenizer.json, tokenizer_config.json) whose GGUF conversion is served.
    #[arg(long, alias = "model_path", value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// The training settings.
    #[command(flatten)]
    pub settings: SftSettingsArgs,
    /// Where `action_feedback/sft_models/...` is created (also `--output_dir`).
    #[arg(long, alias = "output_dir", default_value = "runs")]
    pub output_dir: PathBuf,
    /// Only the first N training rows of each dataset (as stored).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
}

/// The base model `sft-predict` serves with `--llm local`, unless `--model` names another.
pub fn base_model(given: Option<&PathBuf>) -> Result<PathBuf, HarnessError> {
    if let Some(path) = given {
        return Ok(path.clone());
    }
    let local = LlmChoice {
        llm: "local".to_string(),
        cache: CacheMode::Off,
    }
    .settings()?;
    let server = local.server.ok_or_else(|| {
        HarnessError::Usage("configs/llm/local.toml has no [server]: give --model".to_string())
    })?;
    Ok(server.model_file()?)
}

/// Runs `sft-train`.
pub fn run(args: &SftTrainArgs) -> Result<(), HarnessError> {
    let settings = args.settings.settings()?;
    let model_path = base_model(args.model.as_ref())?;
    let kind: DatasetType = args.dataset_type.parse()?;
    let datasets = args.data.load_set(None, kind, &args.set_name, args.limit)?;
    let pairs = first_round_pairs(&datasets, args.action.action())?;
    let tokenizer = ChatTokenizer::for_model(&model_path)?;
    let examples = encode_all(&pairs, &tokenizer, settings.max_length).map_err(|e| match e {
        mb_sft::SftError::NoTrainingData(_) => HarnessError::Usage(format!(
            "no training data found: no training dialog of {} {} has {:?} in its round-1 \
             feedback",
            kind.as_str(),
            args.set_name,
            args.action.name()
        )),
        other => other.into(),
    })?;
    let mut digest = Sha256::new();
    for example in &examples {
        for id in &example.ids {
            digest.update(id.to_le_bytes());
        }
        digest.update(u32::MAX.to_le_bytes());
    }
    let digest: String = digest.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let model_len = match model_path.is_file() {
        true => Some(
            std::fs::metadata(&model_path)
                .map_err(|e| crate::error::file_error(&model_path, e))?
                .len(),
        ),
        false => None,
    };
    let config = json!({
        "dataset_type": kind.as_str(),
        "set_name": args.set_name,
        "data": args.data.data.as_ref().map(|p| p.display().to_string()),
        "limit": args.limit,
        "action_feedback": args.action.name(),
        "model": model_path.display().to_string(),
        "model_bytes": model_len,
        "examples": examples.len(),
        "examples_sha256": digest,
        "settings": settings,
    });
    let dir = model_dir(&args.output_dir, &settings, &args.set_name, args.action);
    let run = RunDir::open(&dir, &config)?;
    let listed: Vec<_> = pairs
        .iter()
        .zip(&examples)
        .map(|(pair, example)| {
            json!({
                "pair": pair,
                "tokens": example.ids.len(),
                "learned_tokens": example.learned(),
            })
        })
        .collect();
    mb_eval::write_json(&dir.join(TRAINING_DATA), &listed)?;

    let device = default_device()?;
    let model = if model_path.is_dir() {
        let mut weights = SafetensorsModel::open(&model_path)?;
        LoraLlama::load(&mut weights, settings.lora, settings.seed, &device)?
    } else {
        let mut weights = GgufFile::open(&model_path)?;
        LoraLlama::load(&mut weights, settings.lora, settings.seed, &device)?
    };
    let steps = examples.len().div_ceil(settings.batch_size) * settings.epochs;
    let bar = progress(
        steps as u64,
        &format!("sft {} ({} examples)", args.action.name(), examples.len()),
    );
    let mut on_step = |record: &StepRecord| {
        bar.set_position(record.step as u64);
        bar.set_message(format!(
            "sft {} epoch {} loss {:.4}",
            args.action.name(),
            record.epoch,
            record.loss
        ));
    };
    let state = train(&model, &examples, &settings, &run, &mut on_step)?;
    bar.finish_and_clear();
    let losses: Vec<f64> = state.steps.iter().map(|s| s.loss).collect();
    let label = format!("{} {} {}", kind.as_str(), args.set_name, args.action.name());
    let chart = loss_chart(&label, &losses)
        .map_err(|e| HarnessError::Usage(format!("drawing the loss curve: {e}")))?;
    let chart_path = dir.join(LOSS_CHART);
    mb_core::atomic_file::write_atomic(&chart_path, chart.as_bytes())
        .map_err(|e| crate::error::file_error(&chart_path, e))?;
    let last = state.steps.last().map_or(f64::NAN, |s| s.loss);
    line(format_args!(
        "trained on {} examples, {} steps, final loss {last:.4}; adapters in {}",
        examples.len(),
        state.steps.len(),
        dir.display()
    ))?;
    Ok(())
}
