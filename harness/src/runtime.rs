//! What every command builds the same way: the engine, the embedder, the LLM roles, and a
//! memory system's context.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mb_baselines::{registry, MemoryContext, MemoryError, SystemSettings, SystemSpec};
use mb_core::Lang;
use mb_datasets::catalog::{Catalog, DatasetType};
use mb_embed::{CachedEmbedder, Embedder, HashingEmbedder, HttpConfig, HttpEmbedder, OnnxEmbedder};
use mb_engine::{Engine, EngineOptions};

use mb_llm::{CacheMode, LlmSettings, LlmStack};
use parking_lot::Mutex;

/// Why a command failed; printed as one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] mb_engine::Error),
    /// The embedder failed or is not set up.
    #[error(transparent)]
    Embed(#[from] mb_embed::EmbedError),
    /// The LLM layer failed or is misconfigured.
    #[error(transparent)]
    Llm(#[from] mb_llm::LlmError),
    /// A memory system failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// Data could not be loaded.
    #[error(transparent)]
    Data(#[from] mb_datasets::DataError),
    /// A raw file could not be imported.
    #[error(transparent)]
    Import(#[from] mb_datasets::import::ImportError),
    /// Predictions could not be evaluated.
    #[error(transparent)]
    Eval(#[from] mb_datasets::evaluate::EvalError),
    /// A summary could not be computed.
    #[error(transparent)]
    Summary(#[from] mb_datasets::summary::SummaryError),
    /// A result file could not be read or written.
    #[error(transparent)]
    Results(#[from] mb_datasets::results::ResultsError),
    /// A catalog lookup failed.
    #[error(transparent)]
    Catalog(#[from] mb_datasets::catalog::CatalogError),
    /// Standard output is closed or full (a closed pipe ends the command quietly).
    #[error("writing the output: {0}")]
    Output(std::io::Error),
    /// The command cannot run as asked.
    #[error("{0}")]
    Usage(String),
    /// One question of a file could not be answered: the file and the question named.
    #[error("{file}: question {question}: {source}")]
    Question {
        /// The file holding the question.
        file: String,
        /// The question's id.
        question: String,
        /// What went wrong.
        source: Box<HarnessError>,
    },
    /// A file could not be read or written.
    #[error("{path}: {detail}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
}

/// An open engine, and the temporary directory it lives in when the user gave none.
pub struct Store {
    /// The engine. Fields drop in order: the engine closes before its directory is removed.
    pub engine: Arc<Engine>,
    _temporary: Option<TemporaryDir>,
}

impl Store {
    /// Opens the engine at `path`, or in a fresh temporary directory removed when the store is
    /// dropped.
    pub fn open(path: Option<&Path>) -> Result<Store, HarnessError> {
        let (path, temporary) = match path {
            Some(path) => (path.to_path_buf(), None),
            None => {
                let dir = std::env::temp_dir().join(format!("mb-harness-{}", std::process::id()));
                (dir.clone(), Some(TemporaryDir(dir)))
            }
        };
        Ok(Store {
            engine: Arc::new(Engine::open(&path, EngineOptions::default())?),
            _temporary: temporary,
        })
    }
}

/// A directory removed when dropped.
struct TemporaryDir(PathBuf);

impl Drop for TemporaryDir {
    fn drop(&mut self) {
        // Best effort: a leftover temporary directory is harmless.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `--embedder`: one embedder for every memory system that embeds, instead of the one each
/// system's settings name.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EmbedderArgs {
    /// `onnx` (all-MiniLM-L6-v2 in-process), `hashing` (model-free feature hashing, for quick
    /// runs), or an OpenAI-compatible endpoint's settings file such as
    /// configs/embedder/paper.toml. Default: each system's `embedder` setting.
    #[arg(long = "embedder", value_name = "onnx|hashing|FILE")]
    pub embedder: Option<String>,
}

impl EmbedderArgs {
    /// Warns (one line) when a forced embedder (`--embedder`) is used by none of `specs`: the
    /// flag, and its file, would otherwise be ignored silently. A warning rather than a refusal,
    /// so one command line can serve every system of a sweep.
    pub fn warn_if_unused(&self, specs: &[&SystemSpec]) {
        if let Some(choice) = &self.embedder {
            if !specs.iter().any(|spec| spec.needs_embedder) {
                let names: Vec<&str> = specs.iter().map(|spec| spec.name).collect();
                tracing::warn!(
                    "--embedder {} is unused: no system of this run embeds ({})",
                    mb_core::excerpt(choice, 200),
                    names.join(", ")
                );
            }
        }
    }
}

/// The embedders of a run, opened once per distinct choice and shared by the systems that
/// name it.
pub struct Embedders {
    engine: Arc<Engine>,
    forced: Option<String>,
    opened: Mutex<HashMap<String, Arc<dyn Embedder>>>,
}

impl Embedders {
    /// Embedders backed by `engine`'s embedding cache; `args` may force one for all.
    pub fn new(engine: Arc<Engine>, args: &EmbedderArgs) -> Embedders {
        Embedders {
            engine,
            forced: args.embedder.clone(),
            opened: Mutex::new(HashMap::new()),
        }
    }

    /// The embedder choice a system with `settings` runs with.
    pub fn choice<'a>(&'a self, settings: &'a SystemSettings) -> &'a str {
        self.forced.as_deref().unwrap_or(&settings.embedder)
    }

    /// The embedder for `spec` with `settings` (none for systems that do not embed).
    pub fn for_system(
        &self,
        spec: &SystemSpec,
        settings: &SystemSettings,
    ) -> Result<Option<Arc<dyn Embedder>>, HarnessError> {
        if !spec.needs_embedder {
            return Ok(None);
        }
        let choice = self.choice(settings);
        let mut opened = self.opened.lock();
        if let Some(embedder) = opened.get(choice) {
            return Ok(Some(embedder.clone()));
        }
        let embedder = open_embedder(choice, &self.engine)?;
        opened.insert(choice.to_string(), embedder.clone());
        Ok(Some(embedder))
    }
}

/// Opens the embedder `choice` names (`onnx`, `hashing` or an endpoint settings file);
/// model-backed ones go through the engine's embedding cache.
pub fn open_embedder(
    choice: &str,
    engine: &Arc<Engine>,
) -> Result<Arc<dyn Embedder>, HarnessError> {
    Ok(match choice {
        "onnx" => Arc::new(CachedEmbedder::new(
            OnnxEmbedder::open_default()?,
            engine.clone(),
        )?),
        "hashing" => Arc::new(HashingEmbedder::new(384)),
        path => {
            let limit = mb_core::files::SETTINGS_LIMIT;
            let text = mb_core::files::read_text(Path::new(path), limit).map_err(|e| {
                HarnessError::File {
                    path: path.to_string(),
                    detail: e.to_string(),
                }
            })?;
            let config: HttpConfig =
                mb_core::parse_toml(&text).map_err(|e| HarnessError::File {
                    path: path.to_string(),
                    detail: e.to_string(),
                })?;
            Arc::new(CachedEmbedder::new(
                HttpEmbedder::new(config)?,
                engine.clone(),
            )?)
        }
    })
}

/// The LLM roles, every one offline.
pub fn offline_llm() -> Result<Arc<LlmStack>, HarnessError> {
    Ok(Arc::new(LlmStack::build(
        &LlmSettings::default(),
        CacheMode::Off,
        None,
    )?))
}

/// The context of a memory in `namespace` with `settings`.
pub fn memory_context(
    settings: SystemSettings,
    engine: Arc<Engine>,
    namespace: String,
    llm: Arc<LlmStack>,
    embedder: Option<Arc<dyn Embedder>>,
    lang: Lang,
    date: &str,
) -> Result<MemoryContext, HarnessError> {
    Ok(MemoryContext {
        settings,
        engine,
        namespace,
        llm,
        embedder,
        lang,
        date: date.to_string(),
    })
}

/// Drops `namespace` if the store holds it, so that what is built there next starts empty (a
/// memory built again, or a copy a stopped run left behind).
pub fn drop_namespace_if_present(engine: &Engine, namespace: &str) -> Result<(), HarnessError> {
    if engine.namespace(namespace).is_ok() {
        engine.drop_namespace(namespace)?;
    }
    Ok(())
}

/// `list`: datasets, sets and memory systems.
pub fn list() -> Result<(), HarnessError> {
    let catalog = Catalog::builtin()?;
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| HarnessError::Output(e);
    for kind in [DatasetType::Domain, DatasetType::Task] {
        writeln!(out, "{}s:", kind.as_str()).map_err(io)?;
        for name in catalog.set_names(kind) {
            let datasets: Vec<String> = catalog
                .resolve(kind, name)?
                .into_iter()
                .map(|c| c.dataset_name)
                .collect();
            writeln!(out, "  {name}: {}", datasets.join(", ")).map_err(io)?;
        }
    }
    writeln!(out, "memory systems:").map_err(io)?;
    for spec in registry::REGISTRY {
        writeln!(
            out,
            "  {:<18} {:<8} settings {}",
            spec.name,
            spec.paper_name,
            spec.settings_origin(None)
        )
        .map_err(io)?;
    }
    Ok(())
}

/// A file error naming the path.
pub fn file_error(path: &Path, error: std::io::Error) -> HarnessError {
    HarnessError::File {
        path: path.display().to_string(),
        detail: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedder_choices_open() {
        let dir = tempfile::tempdir().unwrap();
        let engine =
            Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
        let choose = |embedder: &str| open_embedder(embedder, &engine);
        assert_eq!(choose("hashing").unwrap().dim(), 384);
        // The paper's endpoint settings parse; the dimension is given, so nothing is contacted.
        let paper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/embedder/paper.toml");
        let http = choose(paper.to_str().unwrap()).unwrap();
        assert_eq!(
            (http.model_id(), http.dim()),
            ("Qwen/Qwen3-Embedding-0.6B", 1024)
        );
        let error = choose("/nonexistent/embedder.toml")
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("/nonexistent/embedder.toml"), "{error}");
    }

    #[test]
    fn each_system_gets_the_embedder_its_settings_name_unless_one_is_forced() {
        let dir = tempfile::tempdir().unwrap();
        let engine =
            Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
        let paper = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../configs/embedder/paper.toml")
            .display()
            .to_string();
        let emb = registry::get("embedder_message").unwrap();
        let bm25 = registry::get("bm25_message").unwrap();
        let with = |embedder: &str| {
            let mut built = SystemSettings::default();
            built.embedder = embedder.into();
            built
        };
        let per_system = Embedders::new(engine.clone(), &EmbedderArgs::default());
        let model = |e: Option<Arc<dyn Embedder>>| e.unwrap().model_id().to_string();
        assert_eq!(
            model(per_system.for_system(emb, &with(&paper)).unwrap()),
            "Qwen/Qwen3-Embedding-0.6B"
        );
        assert_eq!(
            model(per_system.for_system(emb, &with("hashing")).unwrap()),
            model(Some(Arc::new(HashingEmbedder::new(384))))
        );
        assert!(per_system
            .for_system(bm25, &with("hashing"))
            .unwrap()
            .is_none());
        let forced = Embedders::new(
            engine,
            &EmbedderArgs {
                embedder: Some("hashing".into()),
            },
        );
        assert_eq!(
            model(forced.for_system(emb, &with(&paper)).unwrap()),
            model(Some(Arc::new(HashingEmbedder::new(384))))
        );
    }
}
