//! `sft-predict`: answers the test split with the model the SFT adapter adapts, served by the
//! local llama.cpp server, and without memory (upstream's `predict_sft.py` answers with the
//! `wo_memory` solver). Timing, `--resume`, evaluation, the summary and the report work as for
//! `off-policy`.

use std::path::{Path, PathBuf};

use mb_baselines::SystemSpec;
use serde_json::Value;

use super::{model_dir, SftSettingsArgs};
use crate::commands::action_feedback::ImplicitAction;
use crate::commands::off_policy::{run_system, AdapterRun, Learned, Questions};
use crate::error::HarnessError;
use crate::run::cases::Outcome;
use crate::run::regime::{run_regime, Regime};
use crate::run::{RunArgs, RunSetup};

/// Arguments of `sft-predict`.
#[derive(clap::Args, Debug)]
pub struct SftPredictArgs {
    /// The flags every regime takes. `--baseline` is always `wo_memory`; `--llm` must serve
    /// the model (`offline`, the default, becomes `local`).
    #[command(flatten)]
    pub run: RunArgs,
    /// The action whose adapter answers (upstream's `--action_feedback`).
    #[arg(long, alias = "action_feedback", value_enum)]
    pub action: ImplicitAction,
    /// The epoch whose checkpoint answers (default: the run's last).
    #[arg(long)]
    pub epoch: Option<usize>,
    /// The training run's settings, which name its directory.
    #[command(flatten)]
    pub settings: SftSettingsArgs,
    /// An adapter file to serve instead of the training run's checkpoint.
    #[arg(long, value_name = "FILE")]
    pub adapter: Option<PathBuf>,
}

/// Runs `sft-predict`.
pub fn run(args: &SftPredictArgs) -> Result<(), HarnessError> {
    let settings = args.settings.settings()?;
    let dir = model_dir(
        &args.run.output_dir,
        &settings,
        &args.run.set_name,
        args.action,
    );
    let epoch = args.epoch.unwrap_or(settings.epochs);
    let adapter = match &args.adapter {
        Some(file) => file.clone(),
        None => dir
            .join(format!("epoch={epoch}_ckpt"))
            .join(mb_sft::ADAPTER),
    };
    if !adapter.is_file() {
        return Err(HarnessError::Usage(format!(
            "no adapter {}: train it first with mb-harness sft-train --action {} (and the same \
             --set-name and settings)",
            adapter.display(),
            args.action.name()
        )));
    }
    let config = dir.join(mb_sft::CONFIG);
    let training: Value = if args.adapter.is_none() {
        mb_eval::read_json(&config)?
    } else {
        Value::Null
    };
    let mut run = args.run.clone();
    run.baseline = "wo_memory".to_string();
    if run.llm.llm == "offline" {
        tracing::info!("sft-predict answers with the adapted local model: --llm local");
        run.llm.llm = "local".to_string();
    }
    run.llm.lora = Some(adapter.clone());
    // An adapter of a GGUF must be served on that file; one of a safetensors directory, on the
    // GGUF converted from it (which only the user knows).
    let trained_on = training["model"]
        .as_str()
        .filter(|path| !Path::new(path).is_dir());
    if let Some(trained_on) = trained_on {
        let served = run
            .llm
            .settings()?
            .server
            .map(|s| s.model_file())
            .transpose()?;
        let same = served.as_ref().is_some_and(|served| {
            std::fs::canonicalize(served).ok() == std::fs::canonicalize(trained_on).ok()
        });
        if !same {
            return Err(HarnessError::Usage(format!(
                "the adapter was trained on {trained_on}, but --llm {} serves {}: serve the \
                 model it adapts",
                run.llm.llm,
                served.map_or("no model".to_string(), |p| p.display().to_string())
            )));
        }
    }
    let adapter_run = AdapterRun {
        action: args.action.name(),
        epoch,
        adapter: adapter.display().to_string(),
        training,
    };
    run_regime(&SftPredict {
        run,
        adapter: adapter_run,
    })
}

struct SftPredict {
    run: RunArgs,
    adapter: AdapterRun,
}

impl Regime for SftPredict {
    const ACCEPTS_MEMORYLESS: bool = true;

    fn run_args(&self) -> &RunArgs {
        &self.run
    }

    async fn run_system(
        &self,
        setup: &RunSetup,
        spec: &'static SystemSpec,
    ) -> Result<Vec<Outcome>, HarnessError> {
        let learned = Learned::ByAdapter(&self.adapter);
        Ok(vec![
            run_system(&self.run, Questions::Test, learned, setup, spec).await?,
        ])
    }
}
