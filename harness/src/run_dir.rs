//! Run directories: a new one per run, with the flags it was started with, or the one
//! `--resume` names after checking that it was started with the same flags.

use mb_baselines::SystemSpec;
use mb_datasets::results::{RunFiles, RUN_CONFIG};
use serde_json::{json, Value};

use crate::run::RunArgs;
use crate::runtime::HarnessError;

/// The run directory: with `--resume`, the run named (after checking it was started with the
/// same flags); otherwise a new `<output>/<regime>/<type>/<set>/<system>/start_at_<stamp>/`
/// with its `run_config.json`. `extra` holds the regime's own settings.
pub fn run_dir(
    args: &RunArgs,
    regime: &str,
    spec: &SystemSpec,
    extra: Value,
) -> Result<RunFiles, HarnessError> {
    let settings = spec.settings(args.memory_config.as_deref())?;
    let mut config = json!({
        "regime": regime,
        "dataset_type": args.dataset_type,
        "set_name": args.set_name,
        "memory_system": spec.name,
        "memory_system_config": spec.settings_origin(args.memory_config.as_deref()),
        "memory_settings": serde_json::to_value(&settings)
            .map_err(|e| HarnessError::Usage(format!("cannot record the settings: {e}")))?,
        "data": args.data.data,
        "llm": args.llm.llm,
        "embedder": args.embedder.embedder,
        "memory_embedder": spec
            .needs_embedder
            .then(|| args.embedder.embedder.clone().unwrap_or_else(|| settings.embedder.clone())),
        "store": args.store,
        "output_dir": args.output_dir,
        "threads": args.threads,
        "retrieve_k": args.retrieve_k,
        "limit": args.limit,
        "date": args.date,
    });
    if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
        config.extend(extra.clone());
    }
    if let Some(dir) = &args.resume {
        let files = RunFiles::new(dir);
        if !files.path(RUN_CONFIG).is_file() {
            return Err(HarnessError::Usage(format!(
                "--resume {}: not a run directory (no {RUN_CONFIG})",
                dir.display()
            )));
        }
        let recorded: Value = files.read(RUN_CONFIG)?;
        // What defines the experiment must match; threads, endpoints and paths may change.
        let defining = [
            "regime",
            "dataset_type",
            "set_name",
            "memory_system",
            "data",
            "retrieve_k",
            "limit",
            "memory_settings",
        ];
        let keys = defining.iter().copied().chain(
            extra
                .as_object()
                .into_iter()
                .flat_map(|e| e.keys().map(String::as_str)),
        );
        // A key a run recorded before it existed (`limit`) has its default, null.
        for key in keys {
            if recorded.get(key).unwrap_or(&Value::Null) != config.get(key).unwrap_or(&Value::Null)
            {
                return Err(HarnessError::Usage(format!(
                    "--resume {}: the run was started with {key} = {}, this command has {}; \
                     resume with the run's own flags",
                    dir.display(),
                    recorded.get(key).unwrap_or(&Value::Null),
                    config.get(key).unwrap_or(&Value::Null)
                )));
            }
        }
        return Ok(files);
    }
    let dir = args
        .output_dir
        .join(regime)
        .join(&args.dataset_type)
        .join(&args.set_name)
        .join(spec.name)
        .join(format!("start_at_{}", mb_core::clock::utc_timestamp()));
    let files = RunFiles::new(dir);
    files.write(RUN_CONFIG, &config)?;
    Ok(files)
}
