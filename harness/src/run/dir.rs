//! Run directories: a new one per run, with the flags it was started with, or the one
//! `--resume` names after checking that it was started with the same flags.

use std::path::{Path, PathBuf};

use mb_baselines::SystemSpec;
use mb_eval::{RunFiles, RUN_CONFIG};
use serde_json::{json, Value};

use crate::error::{file_error, HarnessError};
use crate::run::resume_command::{recorded_command, say_how_to_resume, COMMAND};
use crate::run::RunArgs;
use mb_upstream::Wording;

/// The run directory: with `--resume`, the run named (after checking it was started with the
/// same flags); otherwise a new `<output>/<regime>/<type>/<set>/<system>/start_at_<stamp>/`
/// with its `run_config.json`. `extra` holds the regime's own settings; `wording` is the run's
/// (its roles').
pub fn run_dir(
    args: &RunArgs,
    wording: &Wording,
    regime: &str,
    spec: &SystemSpec,
    extra: Value,
) -> Result<RunFiles, HarnessError> {
    run_dir_in(args, wording, regime, spec, extra, None)
}

/// [`run_dir`] with one more level after the system's (`<system>/<leaf>/start_at_<stamp>/`:
/// upstream's action feedback puts runs under the action).
pub fn run_dir_in(
    args: &RunArgs,
    wording: &Wording,
    regime: &str,
    spec: &SystemSpec,
    extra: Value,
    leaf: Option<&str>,
) -> Result<RunFiles, HarnessError> {
    let llm = args.llm.settings()?;
    let settings = args.system_settings(spec, &llm)?;
    let mut config = json!({
        "regime": regime,
        "dataset_type": args.dataset_type,
        "set_name": args.set_name,
        "memory_system": spec.name,
        "memory_system_config": spec.settings_origin(args.memory_config(&llm)),
        "memory_settings": serde_json::to_value(&settings)
            .map_err(|e| HarnessError::Usage(format!("cannot record the settings: {e}")))?,
        "data": args.data.data.as_ref().map(|path| path.display().to_string()),
        "llm": args.llm.llm,
        "output_handling": llm.output_handling.name(),
        "reasks": llm.reasks,
        "embedder": args.embedder.embedder,
        "memory_embedder": spec.needs_embedder.then(|| settings.embedder().to_string()),
        // Paths as text: JSON holds only UTF-8, and a path need not be.
        "store": args.store.display().to_string(),
        "output_dir": args.output_dir.display().to_string(),
        "threads": args.threads,
        "retrieve_k": args.retrieve_k,
        "limit": args.limit,
        "date": args.date,
        "numpy_scores": args.numpy_scores,
        "prompts": wording.source(),
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
            "output_handling",
        ];
        let keys = defining.iter().copied().chain(
            extra
                .as_object()
                .into_iter()
                .flat_map(|e| e.keys().map(String::as_str)),
        );
        // A key a run recorded before it existed has its default: null (`limit`), or the
        // paraphrase (`prompts`).
        let paraphrased = Value::from(mb_upstream::PARAPHRASED);
        for key in keys.chain(["prompts"]) {
            let default = if key == "prompts" {
                &paraphrased
            } else {
                &Value::Null
            };
            if recorded.get(key).unwrap_or(default) != config.get(key).unwrap_or(&Value::Null) {
                return Err(HarnessError::Usage(format!(
                    "--resume {}: the run was started with {key} = {}, this command has {}; \
                     resume with the run's own flags",
                    dir.display(),
                    recorded.get(key).unwrap_or(&Value::Null),
                    config.get(key).unwrap_or(&Value::Null)
                )));
            }
        }
        say_how_to_resume(files.dir(), recorded.get(COMMAND).is_some());
        crate::run::progress_file::run_dir(files.dir());
        return Ok(files);
    }
    let mut parent = args
        .output_dir
        .join(regime)
        .join(&args.dataset_type)
        .join(&args.set_name)
        .join(spec.name);
    parent.extend(leaf);
    let files = RunFiles::new(new_run_dir(&parent, mb_core::clock::utc_timestamp())?);
    let command = recorded_command(spec.name);
    if let (Some(config), Some(command)) = (config.as_object_mut(), &command) {
        config.insert(COMMAND.into(), json!(command));
    }
    files.write(RUN_CONFIG, &config)?;
    say_how_to_resume(files.dir(), command.is_some());
    crate::run::progress_file::run_dir(files.dir());
    Ok(files)
}

/// Most runs of one system that may start in the same second.
const SAME_SECOND_RUNS: u32 = 1000;

/// Creates `parent/start_at_<stamp>/`, or `start_at_<stamp>.2/`, `.3/`, ... when a run that
/// started in the same second has it: each directory is created exclusively, so two processes
/// never share one.
fn new_run_dir(parent: &Path, stamp: String) -> Result<PathBuf, HarnessError> {
    std::fs::create_dir_all(parent).map_err(|e| file_error(parent, e))?;
    for attempt in 1..=SAME_SECOND_RUNS {
        let name = match attempt {
            1 => format!("start_at_{stamp}"),
            n => format!("start_at_{stamp}.{n}"),
        };
        let dir = parent.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(file_error(&dir, e)),
        }
    }
    Err(HarnessError::Usage(format!(
        "{}: {SAME_SECOND_RUNS} runs started in second {stamp} already; start again",
        parent.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_started_in_the_same_second_get_their_own_directories() {
        let parent = tempfile::tempdir().unwrap();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let parent = parent.path().to_path_buf();
                std::thread::spawn(move || new_run_dir(&parent, "2026-11-26-12-00-00".to_string()))
            })
            .collect();
        let mut dirs: Vec<PathBuf> = threads
            .into_iter()
            .map(|thread| thread.join().unwrap().unwrap())
            .collect();
        dirs.sort();
        dirs.dedup();
        assert_eq!(dirs.len(), 8);
        assert!(dirs.contains(&parent.path().join("start_at_2026-11-26-12-00-00")));
        assert!(dirs.contains(&parent.path().join("start_at_2026-11-26-12-00-00.8")));
    }
}
