//! The flags every regime takes (`RunArgs`), and the checks of their values.

use std::path::{Path, PathBuf};

use clap::Args;
use mb_baselines::{MemoryError, Overrides, SystemSettings, SystemSpec};
use mb_eval::NumpyScores;
use mb_llm::LlmSettings;

use crate::data::DataArgs;
use crate::embedders::EmbedderArgs;
use crate::llm_args::LlmArgs;

/// Flags every regime takes.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// `single`, `domain` or `task` (also upstream's `--dataset_type`).
    #[arg(long, alias = "dataset_type", default_value = "domain")]
    pub dataset_type: String,
    /// The dataset, domain or task (see `mb-harness list`; also upstream's `--set_name`).
    #[arg(long, alias = "set_name", default_value = "Sample")]
    pub set_name: String,
    /// Memory system (`mb-harness list`), a Python class as `py:module.path:ClassName`, or `all`:
    /// upstream's systems (Vanilla, BM25-M/S, Emb-M/S, A-Mem, Mem0, MemoryOS) that upstream runs
    /// on this set; `raptor`, `hybrid` and Python classes are named alone (also upstream's
    /// `--memory_system`).
    #[arg(long, alias = "memory_system", default_value = "bm25_message")]
    pub baseline: String,
    /// Where the data comes from (`--data`).
    #[command(flatten)]
    pub data: DataArgs,
    /// The model roles (`--llm`, `--llm-cache`).
    #[command(flatten)]
    pub llm: LlmArgs,
    /// The embedder (`--embedder`).
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    /// Engine directory: memories, the embedding cache and recorded model answers; reused by
    /// later runs.
    #[arg(long, default_value = "runs/store")]
    pub store: PathBuf,
    /// Where result directories are created: `<output-dir>/<regime>/results/...` (upstream's
    /// `--output_dir` names the regime's own folder, `off-policy/results/`, instead).
    #[arg(long, alias = "output_dir", default_value = "runs")]
    pub output_dir: PathBuf,
    /// Questions answered at once (1 to 256).
    #[arg(long, default_value_t = 4, value_parser = parse_threads)]
    pub threads: usize,
    /// Memories retrieved per question (default: the system's configuration; at most 10000;
    /// also upstream's `--retrieve_k`, which upstream itself ignores).
    #[arg(long, alias = "retrieve_k", value_parser = parse_retrieve_k)]
    pub retrieve_k: Option<usize>,
    /// Memory-system settings replacing the shipped ones for this run: a TOML file for the
    /// chosen system (e.g. `query_syntax = "plain"` for BM25), or a directory of files named
    /// like `configs/memory/*.toml` (missing ones shipped), e.g. `configs/memory/paper`.
    #[arg(long, value_name = "FILE|DIR")]
    pub memory_config: Option<PathBuf>,
    /// Run a system on a set upstream skips it for.
    #[arg(long)]
    pub force: bool,
    /// Continue the interrupted run in this result directory (give the flags it was started
    /// with) instead of starting a new one.
    #[arg(long, value_name = "RUN_DIR")]
    pub resume: Option<PathBuf>,
    /// Only the first N rows of each dataset's test and training splits (as stored): at most N
    /// test cases per dataset, and at most N training dialogs per dataset where the regime
    /// memorizes or asks them. Sizes a run with a slow model; recorded in `run_config.json`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// The date (`YYYY-MM-DD`) prompts give as today's (Mem0's fact extraction; upstream uses
    /// the day its process started). Recorded in `run_config.json`; `--resume` keeps the run's
    /// recorded date, and giving a recorded run's date replays it on any later day.
    #[arg(long, default_value_t = mb_core::clock::utc_date(), value_parser = parse_date)]
    pub date: String,
    /// How the summary counts the scores upstream computes as numpy numbers (LoCoMo's
    /// multi-hop F1): `as-zero`, as upstream's regimes do (its summary counts a value not of
    /// type int or float as 0), or `counted`, as upstream's summary of evaluate_details.json
    /// does (docs/parity.md). Recorded in `run_config.json`.
    #[arg(long, default_value = "as-zero", value_parser = parse_numpy_scores)]
    pub numpy_scores: NumpyScores,
}

/// `--numpy-scores`: `as-zero` or `counted`.
fn parse_numpy_scores(text: &str) -> Result<NumpyScores, String> {
    match text {
        "as-zero" => Ok(NumpyScores::AsZero),
        "counted" => Ok(NumpyScores::Counted),
        other => Err(format!("{other:?}: give as-zero or counted")),
    }
}

/// Most questions answered at once: far more than a model server has parallel slots, and few
/// enough threads for any machine to start.
pub const MAX_THREADS: usize = 256;

/// `--threads`: 1 to [`MAX_THREADS`].
fn parse_threads(text: &str) -> Result<usize, String> {
    let threads: usize = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of threads"))?;
    if (1..=MAX_THREADS).contains(&threads) {
        Ok(threads)
    } else {
        Err(format!("{threads} threads: give 1 to {MAX_THREADS}"))
    }
}

impl RunArgs {
    /// What `--retrieve-k` and `--embedder` put over every system's settings file (applied
    /// where the settings are built, [`mb_baselines::SystemSpec::run_settings`]).
    pub fn overrides(&self) -> Overrides {
        Overrides {
            retrieve_k: self.retrieve_k,
            embedder: self.embedder.embedder.clone(),
        }
    }

    /// The memory systems' settings of this run: `--memory-config`, else the ones the `--llm`
    /// file's models go with (`memory_config`, e.g. the paper's embedders), else the shipped
    /// ones (`None`).
    pub fn memory_config<'a>(&'a self, llm: &'a LlmSettings) -> Option<&'a Path> {
        self.memory_config
            .as_deref()
            .or(llm.memory_config.as_deref())
    }

    /// One line when the `--llm` file names memory settings that `--memory-config` replaces
    /// (the paper's models without the paper's embedders, say).
    pub fn warn_if_memory_config_replaced(&self, llm: &LlmSettings) {
        if let (Some(given), Some(named)) = (&self.memory_config, &llm.memory_config) {
            if given != named {
                tracing::warn!(
                    "the --llm file's models go with the memory settings {} (its memory_config); \
                     --memory-config {} is used instead",
                    named.display(),
                    given.display()
                );
            }
        }
    }

    /// `spec`'s settings for this run: its file (or [`RunArgs::memory_config`]'s) under the
    /// flags.
    pub fn system_settings(
        &self,
        spec: &SystemSpec,
        llm: &LlmSettings,
    ) -> Result<SystemSettings, MemoryError> {
        spec.run_settings(self.memory_config(llm), &self.overrides())
    }
}

/// `--date`: a day of the calendar, written exactly as `YYYY-MM-DD`.
fn parse_date(text: &str) -> Result<String, String> {
    match mb_core::dates::Day::find(text) {
        Some(day) if day.iso() == text => Ok(text.to_string()),
        _ => Err(format!("{text:?} is not a calendar date (YYYY-MM-DD)")),
    }
}

/// `--retrieve-k`: a count of memories up to [`mb_baselines::MAX_RETRIEVE_K`].
fn parse_retrieve_k(text: &str) -> Result<usize, String> {
    let k: usize = text
        .parse()
        .map_err(|_| format!("{text:?} is not a count of memories"))?;
    mb_baselines::check_retrieve_k(k)
}
