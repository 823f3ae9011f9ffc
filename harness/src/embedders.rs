//! `--embedder`, and the embedders of a run: each memory system's own choice, or the one the
//! flag forces, opened once per choice.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use mb_baselines::{SystemSettings, SystemSpec};
use mb_embed::{
    Assets, CachedEmbedder, Embedder, HashingEmbedder, HttpConfig, HttpEmbedder, OnnxConfig,
    OnnxEmbedder,
};
use mb_engine::Engine;
use parking_lot::Mutex;

use crate::error::HarnessError;

/// `--embedder`: one embedder for every memory system that embeds, instead of the one each
/// system's settings name.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EmbedderArgs {
    /// `onnx` (all-MiniLM-L6-v2 in-process), `hashing` (model-free feature hashing, for quick
    /// runs), a model directory run in-process (`model.onnx`, `tokenizer.json`, pooling and
    /// length from sentence-transformers' files, e.g. .cache/models/bge-small-en-v1.5-int8), or
    /// an OpenAI-compatible endpoint's settings file such as configs/embedder/paper.toml.
    /// Default: each system's `embedder` setting.
    #[arg(long = "embedder", value_name = "onnx|hashing|DIR|FILE")]
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
    opened: Mutex<HashMap<String, Arc<dyn Embedder>>>,
}

impl Embedders {
    /// Embedders backed by `engine`'s embedding cache.
    pub fn new(engine: Arc<Engine>) -> Embedders {
        Embedders {
            engine,
            opened: Mutex::new(HashMap::new()),
        }
    }

    /// The embedder for `spec` with `settings` (none for systems that do not embed): the one
    /// they name, `--embedder`'s when the flag was given (see
    /// [`mb_baselines::SystemSpec::run_settings`]).
    pub fn for_system(
        &self,
        spec: &SystemSpec,
        settings: &SystemSettings,
    ) -> Result<Option<Arc<dyn Embedder>>, HarnessError> {
        if !spec.needs_embedder {
            return Ok(None);
        }
        let choice = settings.embedder();
        let mut opened = self.opened.lock();
        if let Some(embedder) = opened.get(choice) {
            return Ok(Some(embedder.clone()));
        }
        let embedder = open_embedder(choice, &self.engine)?;
        opened.insert(choice.to_string(), embedder.clone());
        Ok(Some(embedder))
    }
}

/// Opens the embedder `choice` names (`onnx`, `hashing`, a model directory holding
/// `model.onnx` and `tokenizer.json`, a model's name under `.cache/models/` such as
/// `bge-small-en-v1.5-int8`, or an endpoint settings file); model-backed ones go through the
/// engine's embedding cache.
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
        // A model directory, or a model's name under the checkout's .cache/models/
        // (scripts/setup.sh installs bge-small-en-v1.5-int8, the hybrid memory's embedder);
        // anything else is an endpoint's settings file.
        other => match Assets::model_dir(other) {
            Ok(dir) => Arc::new(CachedEmbedder::new(
                OnnxEmbedder::new(OnnxConfig::from_dir(dir)?)?,
                engine.clone(),
            )?),
            Err(_) => Arc::new(CachedEmbedder::new(endpoint(other)?, engine.clone())?),
        },
    })
}

/// The embedding endpoint the settings file at `path` describes.
fn endpoint(path: &str) -> Result<HttpEmbedder, HarnessError> {
    let file_error = |detail: String| HarnessError::File {
        path: path.to_string(),
        detail,
    };
    let text = mb_core::files::read_text(Path::new(path), mb_core::files::SETTINGS_LIMIT)
        .map_err(|e| file_error(e.to_string()))?;
    let config: HttpConfig = mb_core::parse_toml(&text).map_err(|e| file_error(e.to_string()))?;
    Ok(HttpEmbedder::new(config)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mb_baselines::{registry, Overrides};
    use mb_engine::EngineOptions;

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
        // A directory is a model directory, and one without a model says so.
        let empty = tempfile::tempdir().unwrap();
        let error = choose(empty.path().to_str().unwrap())
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("model.onnx"), "{error}");
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
        let with = |embedder: &str| SystemSettings::default().with_embedder(embedder);
        let per_system = Embedders::new(engine.clone());
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
        let forced = Embedders::new(engine);
        let flag = Overrides {
            embedder: Some("hashing".into()),
            ..Overrides::default()
        };
        assert_eq!(
            model(
                forced
                    .for_system(emb, &with(&paper).with_overrides(flag))
                    .unwrap()
            ),
            model(Some(Arc::new(HashingEmbedder::new(384))))
        );
    }
}
