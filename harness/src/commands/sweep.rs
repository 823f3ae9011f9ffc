//! `sweep`: sweeps across machines. `mb-harness plan` ([`super::plan`]) lists the runs of a sweep (regimes × sets ×
//! systems) and which shard runs each; `mb-harness sweep --shard I/N` runs shard `I`'s share.
//!
//! The heavy part of a sweep is model inference, served elsewhere (vLLM replicas, see the
//! `replicas` endpoint setting); the harness side is many independent runs. The plan is a pure
//! function of its flags, and run `i` of the plan belongs to shard `i mod N`, so a Slurm job
//! array or a Kubernetes indexed Job gives each task its index and nothing else: the shards
//! share only the output directory, where each run has its own result directory, and
//! `mb-harness report` over that directory merges them. Each shard keeps its memories in its
//! own engine directory (`--store`, by default under the output directory), since an engine is
//! opened by one process at a time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

use clap::Args;
use mb_baselines::registry;
use mb_datasets::catalog::DatasetType;

use crate::commands::regimes::Regime;
use crate::error::HarnessError;

/// What a sweep is made of.
#[derive(Args, Debug, Clone)]
pub struct SweepSpec {
    /// Regimes, comma-separated: off-policy, train-performance, stepwise-off-policy, on-policy,
    /// action-feedback-like, action-feedback-copy.
    #[arg(long, default_value = "off-policy", value_delimiter = ',')]
    pub regimes: Vec<String>,
    /// Sets as TYPE:NAME, comma-separated (e.g. `domain:Open-Domain,task:LiSo`).
    #[arg(long, default_value = "domain:Sample", value_delimiter = ',')]
    pub sets: Vec<String>,
    /// Memory systems, comma-separated, or `all`: every default system upstream runs on the
    /// set (without Vanilla for the regimes that need a memory).
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub baseline: Vec<String>,
    /// The result directory every run writes under (the one thing shards share).
    #[arg(long, default_value = "runs")]
    pub output_dir: PathBuf,
    /// Flags given to every run, after `--` (e.g. `-- --llm configs/llm/paper.toml --limit 50`).
    #[arg(last = true)]
    pub flags: Vec<String>,
}

/// `mb-harness sweep`: run one shard of a sweep.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The sweep.
    #[command(flatten)]
    pub spec: SweepSpec,
    /// This machine's shard, `I/N` with I from 0 (a job array's task index).
    #[arg(long, default_value = "0/1")]
    pub shard: Shard,
    /// The shard's engine directory (default `<output-dir>/stores/shard-I-of-N`).
    #[arg(long)]
    pub store: Option<PathBuf>,
}

/// One machine's share of a sweep: runs whose plan index is `index` modulo `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// From 0.
    pub index: u32,
    /// At least 1.
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = || format!("{text:?}: expected I/N with 0 <= I < N (e.g. 0/4)");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = index.trim().parse().map_err(|_| bad())?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// One run of a sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRun {
    /// The regime's command name.
    pub regime: String,
    /// `single`, `domain` or `task`.
    pub dataset_type: String,
    /// The set.
    pub set_name: String,
    /// The memory system.
    pub system: String,
}

impl PlannedRun {
    /// The run's command line after `mb-harness`.
    pub fn arguments(&self, output_dir: &Path, store: &Path, flags: &[String]) -> Vec<String> {
        let mut arguments = Regime::swept()
            .into_iter()
            .find(|swept| swept.name == self.regime)
            .map_or_else(Vec::new, |swept| swept.words);
        arguments.extend([
            "--dataset-type".into(),
            self.dataset_type.clone(),
            "--set-name".into(),
            self.set_name.clone(),
            "--baseline".into(),
            self.system.clone(),
            "--output-dir".into(),
            output_dir.display().to_string(),
            "--store".into(),
            store.display().to_string(),
        ]);
        arguments.extend(flags.iter().cloned());
        arguments
    }
}

/// The sweep's runs in plan order: regimes as given, then sets, then systems in registry order.
/// Systems upstream skips on a set are left out when chosen by `all`, refused when named.
pub fn plan(spec: &SweepSpec) -> Result<Vec<PlannedRun>, HarnessError> {
    let mut runs = Vec::new();
    let swept = Regime::swept();
    for regime in &spec.regimes {
        let accepts_memoryless = swept
            .iter()
            .find(|s| s.name == *regime)
            .map(|s| s.regime.memoryless)
            .ok_or_else(|| {
                let known: Vec<&str> = swept.iter().map(|s| s.name.as_str()).collect();
                HarnessError::Usage(format!(
                    "--regimes: unknown regime {regime:?} (known: {})",
                    known.join(", ")
                ))
            })?;
        for set in &spec.sets {
            let (kind, name) = set
                .split_once(':')
                .ok_or_else(|| HarnessError::Usage(format!("--sets: {set:?} is not TYPE:NAME")))?;
            let kind: DatasetType = kind.parse()?;
            for system in systems(&spec.baseline, kind, name, accepts_memoryless)? {
                runs.push(PlannedRun {
                    regime: regime.clone(),
                    dataset_type: kind.as_str().to_string(),
                    set_name: name.to_string(),
                    system,
                });
            }
        }
    }
    Ok(runs)
}

fn systems(
    chosen: &[String],
    kind: DatasetType,
    set: &str,
    accepts_memoryless: bool,
) -> Result<Vec<String>, HarnessError> {
    if chosen.iter().any(|s| s == "all") {
        return Ok(registry::default_systems()
            .filter(|s| !s.skips(kind, set) && (accepts_memoryless || !s.memoryless))
            .map(|s| s.name.to_string())
            .collect());
    }
    chosen
        .iter()
        .map(|name| {
            let spec = registry::get(name)?;
            if spec.memoryless && !accepts_memoryless {
                return Err(HarnessError::Usage(format!(
                    "--baseline: {name} has no memory, which the regime needs"
                )));
            }
            Ok(spec.name.to_string())
        })
        .collect()
}

/// Whether plan index `i` belongs to `shard`.
pub fn in_shard(i: usize, shard: Shard) -> bool {
    i % shard.count as usize == shard.index as usize
}

/// Runs this shard's runs one after another, each as its own `mb-harness` process; a failed
/// run is reported and the others still run.
pub fn run(args: &SweepArgs) -> Result<(), HarnessError> {
    let runs = plan(&args.spec)?;
    let store = args
        .store
        .clone()
        .unwrap_or_else(|| default_store(&args.spec.output_dir, args.shard));
    let mine: Vec<&PlannedRun> = runs
        .iter()
        .enumerate()
        .filter(|(i, _)| in_shard(*i, args.shard))
        .map(|(_, run)| run)
        .collect();
    let program = std::env::current_exe().map_err(HarnessError::Output)?;
    let mut failed = Vec::new();
    for (n, run) in mine.iter().enumerate() {
        let arguments = run.arguments(&args.spec.output_dir, &store, &args.spec.flags);
        eprintln!(
            "sweep shard {}/{}: run {} of {}: mb-harness {}",
            args.shard.index,
            args.shard.count,
            n + 1,
            mine.len(),
            arguments.join(" ")
        );
        let status = Command::new(&program)
            .args(&arguments)
            .status()
            .map_err(HarnessError::Output)?;
        if !status.success() {
            failed.push(format!("{} {} {}", run.regime, run.set_name, run.system));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(HarnessError::Usage(format!(
            "{} of {} runs of shard {}/{} failed: {}",
            failed.len(),
            mine.len(),
            args.shard.index,
            args.shard.count,
            failed.join("; ")
        )))
    }
}

pub(crate) fn default_store(output_dir: &Path, shard: Shard) -> PathBuf {
    output_dir
        .join("stores")
        .join(format!("shard-{}-of-{}", shard.index, shard.count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition_the_plan() {
        assert_eq!("1/3".parse::<Shard>(), Ok(Shard { index: 1, count: 3 }));
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let shards: Vec<Shard> = (0..3).map(|index| Shard { index, count: 3 }).collect();
        for i in 0..10 {
            assert_eq!(shards.iter().filter(|s| in_shard(i, **s)).count(), 1);
        }
    }

    #[test]
    fn the_plan_crosses_regimes_sets_and_systems() {
        let spec = SweepSpec {
            regimes: vec!["off-policy".into(), "on-policy".into()],
            sets: vec!["domain:Sample".into()],
            baseline: vec!["all".into()],
            output_dir: PathBuf::from("runs"),
            flags: Vec::new(),
        };
        let runs = plan(&spec).unwrap();
        let off = runs.iter().filter(|r| r.regime == "off-policy").count();
        let on = runs.iter().filter(|r| r.regime == "on-policy").count();
        // Vanilla has no memory: on-policy leaves it out.
        assert_eq!(off, on + 1);
        assert!(runs
            .iter()
            .any(|r| r.system == "wo_memory" && r.regime == "off-policy"));
        let bad = SweepSpec {
            regimes: vec!["offpolicy".into()],
            ..spec.clone()
        };
        assert!(plan(&bad).is_err());
        let bad = SweepSpec {
            sets: vec!["Sample".into()],
            ..spec
        };
        assert!(plan(&bad).is_err());
    }

    /// `run_scripts/action_feedback.py`: both actions, two domains, the seven memory systems.
    #[test]
    fn the_action_feedback_sweep_is_upstreams() {
        let spec = SweepSpec {
            regimes: vec!["action-feedback-like".into(), "action-feedback-copy".into()],
            sets: vec!["domain:Academic&Knowledge".into(), "domain:Legal".into()],
            baseline: vec!["all".into()],
            output_dir: PathBuf::from("runs"),
            flags: Vec::new(),
        };
        let runs = plan(&spec).unwrap();
        assert_eq!(runs.len(), 28, "{runs:?}");
        assert!(runs.iter().all(|r| r.system != "wo_memory"));
        let arguments = runs[0].arguments(Path::new("out"), Path::new("store"), &[]);
        assert_eq!(arguments[..3], ["action-feedback", "--action", "like"]);
        assert_eq!(arguments[3..5], ["--dataset-type", "domain"]);
    }
}
