//! What an [`super::OnnxEmbedder`] runs and how.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::assets::{Assets, DEFAULT_MODEL_ID};
use crate::error::{EmbedError, Result};
use crate::pooling::Pooling;

/// ONNX Runtime's graph optimization levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OptimizationLevel {
    /// No graph rewrites.
    Disable,
    /// Constant folding and redundant-node removal.
    Basic,
    /// Basic plus operator fusions (attention, GELU, layer norm).
    Extended,
    /// Everything, including layout changes.
    All,
}

/// Model files and execution settings of an ONNX embedder.
///
/// The runtime defaults were picked from `benches/embed_throughput.py` (see docs/benchmarks.md's
/// embedding section): one single-threaded session per core (and one on every core for a lone
/// query), length-sorted batches of at most
/// 32 texts and 512 padded tokens (larger batches spill the activations out of the L2 cache and
/// get slower), every graph optimization except the skip-layer-norm fusion, whose fused kernel
/// is slower on x86 than the two operators it replaces.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OnnxConfig {
    /// Identifies the vectors (see [`crate::Embedder::model_id`]).
    pub model_id: String,
    /// The ONNX model file.
    pub model: PathBuf,
    /// The Hugging Face `tokenizer.json` that belongs to the model.
    pub tokenizer: PathBuf,
    /// The ONNX Runtime library; `None` locates it like [`Assets::runtime`].
    pub runtime: Option<PathBuf>,
    /// How token states become one vector (ignored when the model outputs sentence vectors).
    pub pooling: Pooling,
    /// Longest input in tokens, special tokens included; longer texts are truncated. `None`
    /// takes the tokenizer's own truncation length, else 512 (BERT's position limit).
    pub max_tokens: Option<usize>,
    /// Most texts per inference call.
    pub batch_size: usize,
    /// Most padded tokens (texts × longest text) per inference call; a single longer text
    /// still runs, alone.
    pub max_batch_tokens: usize,
    /// Independent sessions, so that this many batches run at once on different threads.
    pub sessions: usize,
    /// Threads ONNX Runtime uses inside one session's operators.
    pub intra_threads: usize,
    /// Threads of the session that embeds a lone text (a query): one text is one batch, which
    /// the session-per-core pool would run on one core. With more than 1, a separate session
    /// runs it on this many threads; 1 leaves lone texts to the pool.
    pub solo_threads: usize,
    /// Graph optimization level.
    pub optimization: OptimizationLevel,
    /// ONNX Runtime graph transformers to skip (by name, e.g. `SkipLayerNormFusion`).
    pub disabled_optimizers: Vec<String>,
}

impl OnnxConfig {
    /// The default model (all-MiniLM-L6-v2 int8), found where [`Assets::locate`] looks.
    pub fn default_model() -> Result<OnnxConfig> {
        Ok(OnnxConfig::for_default_model(Assets::locate()?))
    }

    /// The default model from files already located (e.g. by [`Assets::locate_in`]): mean
    /// pooling over at most 256 tokens, as its sentence-transformers configuration says.
    pub fn for_default_model(assets: Assets) -> OnnxConfig {
        OnnxConfig {
            model_id: DEFAULT_MODEL_ID.to_string(),
            runtime: Some(assets.runtime),
            pooling: Pooling::Mean,
            max_tokens: Some(256),
            ..OnnxConfig::with_files(assets.model, assets.tokenizer)
        }
    }

    /// A sentence-transformer model exported to a directory holding `model.onnx` and
    /// `tokenizer.json`.
    ///
    /// The pooling mode comes from `pooling_config.json` or `1_Pooling/config.json` (mean when
    /// neither exists) and the token limit from `sentence_bert_config.json`'s `max_seq_length`
    /// (else left to [`OnnxConfig::max_tokens`]'s fallback). The model id is the directory's name.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<OnnxConfig> {
        let dir = dir.as_ref();
        let model = dir.join("model.onnx");
        let tokenizer = dir.join("tokenizer.json");
        for (path, what) in [(&model, "ONNX model"), (&tokenizer, "tokenizer")] {
            if !path.is_file() {
                return Err(EmbedError::AssetMissing {
                    what,
                    looked_in: path.display().to_string(),
                    fix: "point the embedder at a directory with model.onnx and tokenizer.json"
                        .to_string(),
                });
            }
        }
        let pooling = match ["pooling_config.json", "1_Pooling/config.json"]
            .iter()
            .map(|name| dir.join(name))
            .find(|path| path.is_file())
        {
            Some(path) => {
                let text = read(&path)?;
                Pooling::from_sentence_transformers_config(&text).map_err(|detail| {
                    EmbedError::Config {
                        field: "pooling",
                        reason: format!("{}: {detail}", path.display()),
                    }
                })?
            }
            None => Pooling::Mean,
        };
        let max_tokens = max_seq_length(dir)?;
        let model_id = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "onnx-model".to_string());
        Ok(OnnxConfig {
            model_id,
            pooling,
            max_tokens,
            ..OnnxConfig::with_files(model, tokenizer)
        })
    }

    /// A model file and its tokenizer with the default execution settings (see the type docs),
    /// mean pooling and the tokenizer's own length limit.
    pub fn with_files(model: PathBuf, tokenizer: PathBuf) -> OnnxConfig {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        OnnxConfig {
            model_id: "onnx-model".to_string(),
            model,
            tokenizer,
            runtime: None,
            pooling: Pooling::Mean,
            max_tokens: None,
            batch_size: 32,
            max_batch_tokens: 512,
            sessions: cores,
            intra_threads: 1,
            solo_threads: cores,
            optimization: OptimizationLevel::All,
            disabled_optimizers: vec!["SkipLayerNormFusion".to_string()],
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let positive = [
            ("batch_size", self.batch_size),
            ("max_batch_tokens", self.max_batch_tokens),
            ("sessions", self.sessions),
            ("intra_threads", self.intra_threads),
            ("solo_threads", self.solo_threads),
            ("max_tokens", self.max_tokens.unwrap_or(1)),
        ];
        for (field, value) in positive {
            if value == 0 {
                return Err(EmbedError::Config {
                    field,
                    reason: "must be at least 1".to_string(),
                });
            }
        }
        Ok(())
    }
}

/// `max_seq_length` from `sentence_bert_config.json`, if the file exists.
fn max_seq_length(dir: &Path) -> Result<Option<usize>> {
    #[derive(Deserialize)]
    struct SentenceBertConfig {
        max_seq_length: usize,
    }
    let path = dir.join("sentence_bert_config.json");
    if !path.is_file() {
        return Ok(None);
    }
    let config: SentenceBertConfig =
        serde_json::from_str(&read(&path)?).map_err(|e| EmbedError::Config {
            field: "max_tokens",
            reason: format!("{}: {e}", path.display()),
        })?;
    Ok(Some(config.max_seq_length))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| EmbedError::Config {
        field: "model directory",
        reason: format!("{}: {e}", path.display()),
    })
}
