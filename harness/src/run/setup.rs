//! A regime's set up: the set it runs on loaded, the systems chosen and checked, and the
//! services they share (the engine store, the model roles, the embedders, the async runtime),
//! all checked before any work.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mb_baselines::{registry, MemorySystem, Overrides, SystemSettings, SystemSpec};
use mb_core::Lang;
use mb_datasets::catalog::{Catalog, DatasetLang, DatasetType};
use mb_datasets::Dataset;
use mb_engine::Engine;
use mb_eval::NumpyScores;
use mb_eval::{RunFiles, RUN_CONFIG};
use mb_llm::{LlmStack, LocalServer};
use serde_json::Value;

use crate::embedders::Embedders;
use crate::error::HarnessError;
use crate::run::RunArgs;
use crate::store::{memory_context, Store};

/// The loaded set, the systems to run, and the services they share.
pub struct RunSetup {
    /// `single`, `domain` or `task`.
    pub kind: DatasetType,
    /// The set's datasets in upstream's order.
    pub datasets: Vec<Dataset>,
    /// The memory systems to run.
    pub specs: Vec<&'static SystemSpec>,
    /// The run's date (`--date`, or a resumed run's recorded one).
    pub date: String,
    /// The engine, model roles, embedders and async runtime.
    pub services: Services,
    /// How the summary counts upstream's numpy scores (`--numpy-scores`).
    pub numpy_scores: NumpyScores,
}

impl RunSetup {
    /// Loads everything `args` names; a memoryless system (Vanilla) is refused when
    /// `memoryless` is false (regimes whose point is a memory that changes).
    pub fn new(args: &RunArgs, memoryless: bool) -> Result<RunSetup, HarnessError> {
        let kind: DatasetType = args.dataset_type.parse()?;
        let specs: Vec<&'static SystemSpec> = if args.baseline == "all" {
            registry::default_systems()
                .filter(|s| !s.skips(kind, &args.set_name) && (memoryless || !s.memoryless))
                .collect()
        } else {
            let spec = registry::get(&args.baseline)?;
            if spec.skips(kind, &args.set_name) && !args.force {
                return Err(HarnessError::Usage(format!(
                    "upstream does not run {} on {} {}: {} (--force runs it anyway)",
                    spec.name,
                    kind.as_str(),
                    args.set_name,
                    spec.skip_reason
                )));
            }
            vec![spec]
        };
        // Only WritingBench is scored by the critic: other runs need no critic server.
        let critic = Catalog::builtin()?
            .resolve(kind, &args.set_name)
            .map_or(true, |sets| {
                sets.iter()
                    .any(|d| d.class_name.starts_with("WritingBench"))
            });
        let services = Services::start(args, &specs, critic)?;
        let datasets = args.data.load_set(
            services.llm.wording.checkout(),
            kind,
            &args.set_name,
            args.limit,
        )?;
        check_systems(args, &specs, memoryless)?;
        Ok(RunSetup {
            kind,
            datasets,
            date: run_date(args)?,
            services,
            specs,
            numpy_scores: args.numpy_scores,
        })
    }

    /// The language a memory serving the set indexes for: Chinese when any dataset is.
    pub fn lang(&self) -> Lang {
        if self
            .datasets
            .iter()
            .any(|d| d.config.lang == DatasetLang::Zh)
        {
            Lang::Zh
        } else {
            Lang::En
        }
    }

    /// Opens `spec`'s memory in `namespace`, for the set's language and the run's date.
    pub fn system(
        &self,
        spec: &'static SystemSpec,
        namespace: &str,
    ) -> Result<Box<dyn MemorySystem>, HarnessError> {
        self.services
            .system(spec, namespace, self.lang(), &self.date)
    }

    /// How many memories `spec` retrieves in this run ([`Services::retrieve_k`]).
    pub fn retrieve_k(&self, spec: &SystemSpec) -> Result<usize, HarnessError> {
        self.services.retrieve_k(spec)
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.services.store.engine
    }
}

/// The systems `args --baseline` names without a set to check them against (`all`: every
/// default system with a memory, as a regime needing one would run them).
pub fn systems_without_set(
    args: &RunArgs,
    memoryless: bool,
) -> Result<Vec<&'static SystemSpec>, HarnessError> {
    let specs: Vec<&'static SystemSpec> = if args.baseline == "all" {
        registry::default_systems()
            .filter(|s| memoryless || !s.memoryless)
            .collect()
    } else {
        vec![registry::get(&args.baseline)?]
    };
    check_systems(args, &specs, memoryless)?;
    Ok(specs)
}

/// Refuses a memoryless system where the regime needs a memory, and `--resume` of several.
fn check_systems(
    args: &RunArgs,
    specs: &[&'static SystemSpec],
    memoryless: bool,
) -> Result<(), HarnessError> {
    if args.resume.is_some() && specs.len() != 1 {
        return Err(HarnessError::Usage(
            "--resume continues one run: name its --baseline".into(),
        ));
    }
    if let Some(spec) = specs.iter().find(|s| !memoryless && s.memoryless) {
        return Err(HarnessError::Usage(format!(
            "this regime needs a memory: {} has none",
            spec.name
        )));
    }
    Ok(())
}

/// What every run of memory systems uses whatever its data: the engine store, the model roles
/// (with the server `--llm local` started), the systems' embedders and the async runtime,
/// checked before any work.
pub struct Services {
    /// The engine store.
    pub store: Store,
    /// The model roles.
    pub llm: Arc<LlmStack>,
    /// The async runtime answers run on.
    pub runtime: tokio::runtime::Runtime,
    /// The embedders of the systems that embed.
    pub embedders: Embedders,
    /// `--memory-config`: settings replacing the systems' shipped ones.
    pub memory_config: Option<PathBuf>,
    /// `--retrieve-k` and `--embedder`, over every system's settings.
    pub overrides: Overrides,
    /// How many memories each of the run's systems retrieves (its settings under
    /// `--retrieve-k`), resolved once here and read by the regimes through
    /// [`Services::retrieve_k`], never back out of a built system.
    retrieve_k: BTreeMap<&'static str, usize>,
    /// The model server `--llm local` started, stopped when the services are dropped (after
    /// everything above, which may still call it).
    pub _llm_server: Option<LocalServer>,
}

impl Services {
    /// Opens the store, starts the model roles (and pings them; the critic only when the run
    /// scores with it, `critic`), and opens the embedders of `specs`: settings that do not
    /// parse, an embedder that cannot open or a model that does not answer stop the run here.
    pub fn start(
        args: &RunArgs,
        specs: &[&'static SystemSpec],
        critic: bool,
    ) -> Result<Services, HarnessError> {
        args.embedder.warn_if_unused(specs);
        let store = Store::open(Some(&args.store))?;
        let (llm_settings, llm_server) = args.llm.start()?;
        let llm = Arc::new(args.llm.stack(&llm_settings, &store.engine)?);
        args.warn_if_memory_config_replaced(&llm_settings);
        let embedders = Embedders::new(store.engine.clone());
        let mut retrieve_k = BTreeMap::new();
        for spec in specs {
            let settings = args.system_settings(spec, &llm_settings)?;
            embedders.for_system(spec, &settings)?;
            retrieve_k.insert(spec.name, settings.retrieve_k());
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads.max(1))
            .enable_all()
            .build()
            .map_err(|e| HarnessError::Usage(format!("cannot start the async runtime: {e}")))?;
        if args.llm.cache_mode() != mb_llm::CacheMode::Replay {
            let mut checked = llm_settings.clone();
            if !critic {
                checked.critic = mb_llm::RoleSettings::Offline;
            }
            runtime.block_on(mb_llm::check_reachable(&checked))?;
            runtime.block_on(preflight(&llm, critic))?;
        }
        Ok(Services {
            memory_config: args.memory_config(&llm_settings).map(Path::to_path_buf),
            overrides: args.overrides(),
            retrieve_k,
            store,
            llm,
            runtime,
            embedders,
            _llm_server: llm_server,
        })
    }

    /// `spec`'s settings for the run: its file (or `--memory-config`'s) under `--retrieve-k`
    /// and `--embedder`.
    fn settings(&self, spec: &SystemSpec) -> Result<SystemSettings, HarnessError> {
        Ok(spec.run_settings(self.memory_config.as_deref(), &self.overrides)?)
    }

    /// How many memories `spec` retrieves in this run (a system the run did not start with
    /// is refused).
    pub fn retrieve_k(&self, spec: &SystemSpec) -> Result<usize, HarnessError> {
        self.retrieve_k.get(spec.name).copied().ok_or_else(|| {
            HarnessError::Usage(format!("{} is not one of this run's systems", spec.name))
        })
    }

    /// Opens `spec`'s memory in `namespace`, indexing for `lang`, with `date` as today's.
    pub fn system(
        &self,
        spec: &'static SystemSpec,
        namespace: &str,
        lang: Lang,
        date: &str,
    ) -> Result<Box<dyn MemorySystem>, HarnessError> {
        let settings = self.settings(spec)?;
        let embedder = self.embedders.for_system(spec, &settings)?;
        let context = memory_context(
            settings,
            self.store.engine.clone(),
            namespace.to_string(),
            self.llm.clone(),
            embedder,
            lang,
            date,
        )?;
        Ok(spec.build(context)?)
    }
}

/// Asks every model-backed role the run uses (the critic only with `critic`) for a one-word
/// reply, so an unreachable or misconfigured endpoint stops the run before any work (not after
/// an hour of memorization).
async fn preflight(llm: &LlmStack, critic: bool) -> Result<(), HarnessError> {
    for (role, backend) in llm.roles() {
        if backend.is_offline() || (role == "critic" && !critic) {
            continue;
        }
        let ping = mb_llm::ops::Answer::new(vec![mb_llm::Message::user("Reply with the word OK.")]);
        backend
            .run(&ping, Lang::En)
            .await
            .map_err(|e| HarnessError::Usage(format!("the {role} model is not usable: {e}")))?;
    }
    // The check is not part of any case's cost.
    llm.ledger.take();
    Ok(())
}

/// The run's date: a resumed run's recorded one (runs recorded before dates were have none),
/// else `--date`.
fn run_date(args: &RunArgs) -> Result<String, HarnessError> {
    if let Some(dir) = &args.resume {
        let files = RunFiles::new(dir);
        if files.path(RUN_CONFIG).is_file() {
            let recorded: Value = files.read(RUN_CONFIG)?;
            if let Some(date) = recorded["date"].as_str() {
                return Ok(date.to_string());
            }
        }
    }
    Ok(args.date.clone())
}

/// Test cases of the set (at least one, to divide by).
pub fn test_cases(setup: &RunSetup) -> f64 {
    setup
        .datasets
        .iter()
        .map(|d| d.test.len())
        .sum::<usize>()
        .max(1) as f64
}
