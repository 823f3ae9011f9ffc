//! In-process sentence embeddings with ONNX Runtime.
//!
//! A call tokenizes every text, sorts the texts by token count so that each batch pads as
//! little as possible, and runs the batches on a pool of sessions in parallel (running a session
//! needs exclusive access, so one session per core beats one shared session behind a lock). The
//! token states are mean-pooled under the attention mask and L2-normalized.
//!
//! The int8 model quantises activations with one scale per tensor, so a text's vector depends
//! very slightly on what else is in its batch (cosine ≥ 0.999 against running it alone).

mod config;
mod rerank;
mod runtime;
mod session_pool;

use std::borrow::Cow;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use ort::session::builder::GraphOptimizationLevel;
use ort::session::{Session, SessionInputValue};
use ort::value::TensorRef;
use parking_lot::Mutex;
use tokenizers::{Encoding, Tokenizer, TruncationParams};

pub use config::{OnnxConfig, OptimizationLevel};
pub use rerank::OnnxReranker;

use crate::assets::Assets;
use crate::error::{EmbedError, Result};
use crate::pooling::l2_normalize;
use crate::Embedder;
use session_pool::SessionPool;

/// Longest input when neither the configuration nor the tokenizer sets one: BERT's position
/// embedding table.
const FALLBACK_MAX_TOKENS: usize = 512;

/// A sentence-transformer ONNX model run in-process (see the module documentation).
pub struct OnnxEmbedder {
    config: OnnxConfig,
    tokenizer: Tokenizer,
    pad_id: u32,
    inputs: Vec<(String, ModelInput)>,
    output: ModelOutput,
    dim: usize,
    sessions: SessionPool,
    /// The multi-threaded session for a lone text (`OnnxConfig::solo_threads`).
    solo: Option<Mutex<Session>>,
}

/// The model inputs a BERT-style tokenizer can fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModelInput {
    Ids,
    AttentionMask,
    TokenTypes,
}

/// Which output holds the vectors, and whether it still needs pooling.
#[derive(Debug, Clone)]
enum ModelOutput {
    /// `batch × tokens × dim` token states.
    TokenStates(String),
    /// `batch × dim` sentence vectors.
    SentenceVectors(String),
}

/// Tensors of one batch, padded to its longest text.
struct BatchInputs {
    rows: usize,
    width: usize,
    ids: Vec<i64>,
    mask: Vec<i64>,
    types: Vec<i64>,
}

impl OnnxEmbedder {
    /// The default model (all-MiniLM-L6-v2 int8, 384-d) installed by `scripts/setup.sh`.
    pub fn open_default() -> Result<OnnxEmbedder> {
        OnnxEmbedder::new(OnnxConfig::default_model()?)
    }

    /// Loads the runtime, the tokenizer and `config.sessions` sessions of the model, and checks
    /// that tokenizer and model fit together by embedding a probe.
    pub fn new(config: OnnxConfig) -> Result<OnnxEmbedder> {
        config.validate()?;
        let library = match &config.runtime {
            Some(path) => path.clone(),
            None => Assets::runtime()?,
        };
        let environment = runtime::environment(&library)?;
        let (mut tokenizer, max_tokens) = load_tokenizer(&config)?;
        let pad_id = unpadded(&mut tokenizer, max_tokens, &config.tokenizer)?;

        let model_error = |detail: String| EmbedError::Model {
            path: config.model.clone(),
            detail,
        };
        let level = match config.optimization {
            OptimizationLevel::Disable => GraphOptimizationLevel::Disable,
            OptimizationLevel::Basic => GraphOptimizationLevel::Level1,
            OptimizationLevel::Extended => GraphOptimizationLevel::Level2,
            OptimizationLevel::All => GraphOptimizationLevel::All,
        };
        let disabled = config.disabled_optimizers.join(",");
        let open_session = |threads: usize| {
            Session::builder(environment)
                .and_then(|b| Ok(b.with_optimization_level(level)?))
                .and_then(|b| {
                    if disabled.is_empty() {
                        Ok(b)
                    } else {
                        Ok(b.with_disabled_optimizers(&disabled)?)
                    }
                })
                .and_then(|b| Ok(b.with_intra_threads(threads)?))
                // Idle threads sleep instead of spinning: the solo session's helpers would
                // otherwise take cycles from the pool's sessions between queries.
                .and_then(|b| Ok(b.with_intra_op_spinning(false)?))
                .and_then(|b| Ok(b.with_inter_threads(1)?))
                .and_then(|mut b| b.commit_from_file(&config.model))
                .map_err(|e| model_error(e.to_string()))
        };
        let mut sessions = Vec::with_capacity(config.sessions);
        for _ in 0..config.sessions {
            sessions.push(open_session(config.intra_threads)?);
        }
        let solo = if config.solo_threads > 1 {
            Some(Mutex::new(open_session(config.solo_threads)?))
        } else {
            None
        };
        let first = sessions
            .first()
            .ok_or_else(|| model_error("no session".to_string()))?;
        let inputs = model_inputs(first).map_err(model_error)?;
        let output = model_output(first).map_err(model_error)?;

        let mut embedder = OnnxEmbedder {
            config,
            tokenizer,
            pad_id,
            inputs,
            output,
            dim: 0,
            sessions: SessionPool::new(sessions),
            solo,
        };
        embedder.dim = embedder.probe()?;
        tracing::info!(
            model = %embedder.config.model.display(),
            dim = embedder.dim,
            max_tokens,
            sessions = embedder.config.sessions,
            intra_threads = embedder.config.intra_threads,
            "ONNX embedder ready"
        );
        Ok(embedder)
    }

    /// The configuration this embedder runs with.
    pub fn config(&self) -> &OnnxConfig {
        &self.config
    }

    /// Token count of `text` after truncation, special tokens included.
    pub fn token_count(&self, text: &str) -> Result<usize> {
        Ok(self.encode(&[text])?.first().map_or(0, Encoding::len))
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Encoding>> {
        self.tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| tokenizer_error(&self.config.tokenizer, e.to_string()))
    }

    /// Embeds the largest token id once: fails if the vocabulary is larger than the model's
    /// embedding table, and reveals the output dimension.
    fn probe(&self) -> Result<usize> {
        let vocab = self.tokenizer.get_vocab_size(true);
        let highest = i64::try_from(vocab.saturating_sub(1)).unwrap_or(i64::MAX);
        let batch = BatchInputs {
            rows: 1,
            width: 1,
            ids: vec![highest],
            mask: vec![1],
            types: vec![0],
        };
        let vectors = self.sessions.with(|session| self.run(session, &batch));
        let vectors = vectors.map_err(|e| {
            tokenizer_error(
                &self.config.tokenizer,
                format!(
                    "does not fit model {}: the vocabulary has {vocab} tokens and embedding \
                     token {highest} failed ({e})",
                    self.config.model.display()
                ),
            )
        })?;
        vectors
            .first()
            .map(Vec::len)
            .filter(|&dim| dim > 0)
            .ok_or_else(|| EmbedError::Model {
                path: self.config.model.clone(),
                detail: "the model returned an empty vector".to_string(),
            })
    }

    fn batch_inputs(&self, encodings: &[&Encoding]) -> BatchInputs {
        let rows = encodings.len();
        let width = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut batch = BatchInputs {
            rows,
            width,
            ids: vec![i64::from(self.pad_id); rows * width],
            mask: vec![0; rows * width],
            types: vec![0; rows * width],
        };
        for (row, encoding) in encodings.iter().enumerate() {
            let start = row * width;
            let widen = |dst: &mut [i64], src: &[u32]| {
                dst.iter_mut()
                    .zip(src)
                    .for_each(|(d, s)| *d = i64::from(*s));
            };
            widen(&mut batch.ids[start..start + width], encoding.get_ids());
            widen(
                &mut batch.mask[start..start + width],
                encoding.get_attention_mask(),
            );
            widen(
                &mut batch.types[start..start + width],
                encoding.get_type_ids(),
            );
        }
        batch
    }

    /// Cuts length-sorted texts into batches within `batch_size` and `max_batch_tokens`.
    fn plan_batches<'o>(&self, order: &'o [usize], encodings: &[Encoding]) -> Vec<&'o [usize]> {
        let mut batches = Vec::new();
        let mut start = 0;
        for (position, &text) in order.iter().enumerate() {
            // Sorted by length, so the newest text is the batch's widest.
            let rows = position - start + 1;
            let padded = rows * encodings[text].len();
            if rows > 1 && (rows > self.config.batch_size || padded > self.config.max_batch_tokens)
            {
                batches.push(&order[start..position]);
                start = position;
            }
        }
        if start < order.len() {
            batches.push(&order[start..]);
        }
        // Fewer batches than sessions would leave cores idle: halve the largest until each
        // session has one (a call of 20 short texts runs as two batches of 10 at once).
        while batches.len() < self.config.sessions {
            let Some((largest, _)) = batches
                .iter()
                .enumerate()
                .filter(|(_, batch)| batch.len() > 1)
                .max_by_key(|(_, batch)| batch.len())
            else {
                break;
            };
            let batch = batches[largest];
            let (first, second) = batch.split_at(batch.len() / 2);
            batches[largest] = first;
            batches.push(second);
        }
        batches
    }

    /// Embeds each batch (indexes into `encodings`) on up to `sessions` threads; returns the
    /// vectors of each batch, in batch order.
    fn run_batches(
        &self,
        batches: &[&[usize]],
        encodings: &[Encoding],
    ) -> Result<Vec<Vec<Vec<f32>>>> {
        let embed_batch = |batch: &[usize]| {
            let rows: Vec<&Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
            let inputs = self.batch_inputs(&rows);
            // A lone text runs on every core when the solo session is free.
            if let [_] = batches {
                if let Some(mut solo) = self.solo.as_ref().and_then(Mutex::try_lock) {
                    return self.run(&mut solo, &inputs);
                }
            }
            self.sessions.with(|session| self.run(session, &inputs))
        };
        let workers = self.config.sessions.min(batches.len());
        if workers <= 1 {
            return batches.iter().map(|batch| embed_batch(batch)).collect();
        }
        let next = AtomicUsize::new(0);
        let worker = || -> Result<Vec<(usize, Vec<Vec<f32>>)>> {
            let mut done = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(batch) = batches.get(index) else {
                    return Ok(done);
                };
                done.push((index, embed_batch(batch)?));
            }
        };
        let mut per_batch = vec![Vec::new(); batches.len()];
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
            for handle in handles {
                let done = handle.join().unwrap_or_else(|_| {
                    Err(EmbedError::Inference("an embedding worker panicked".into()))
                })?;
                for (index, vectors) in done {
                    per_batch[index] = vectors;
                }
            }
            Ok(per_batch)
        })
    }

    /// Runs one padded batch and returns one unit vector per row.
    fn run(&self, session: &mut Session, batch: &BatchInputs) -> Result<Vec<Vec<f32>>> {
        let inference = |e: ort::Error| EmbedError::Inference(e.to_string());
        let shape = [batch.rows, batch.width];
        let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = Vec::new();
        for (name, input) in &self.inputs {
            let data = match input {
                ModelInput::Ids => &batch.ids,
                ModelInput::AttentionMask => &batch.mask,
                ModelInput::TokenTypes => &batch.types,
            };
            let tensor = TensorRef::from_array_view((shape, data.as_slice())).map_err(inference)?;
            inputs.push((Cow::from(name.as_str()), tensor.into()));
        }
        let outputs = session.run(inputs).map_err(inference)?;
        let (name, pooled) = match &self.output {
            ModelOutput::TokenStates(name) => (name, true),
            ModelOutput::SentenceVectors(name) => (name, false),
        };
        let value = outputs
            .get(name)
            .ok_or_else(|| EmbedError::Inference(format!("output {name:?} missing")))?;
        let (out_shape, data) = value.try_extract_tensor::<f32>().map_err(inference)?;
        let dims: Vec<usize> = out_shape.iter().map(|&d| d.max(0) as usize).collect();
        let unexpected = || {
            EmbedError::Inference(format!(
                "output {name:?} has shape {dims:?} for a {}×{} batch",
                batch.rows, batch.width
            ))
        };
        let mut vectors = Vec::with_capacity(batch.rows);
        match (pooled, dims.as_slice()) {
            (true, &[rows, width, dim]) if rows == batch.rows && width == batch.width => {
                for (row, states) in data.chunks_exact(width * dim).enumerate() {
                    let mask = &batch.mask[row * width..(row + 1) * width];
                    vectors.push(self.config.pooling.pool(states, mask, dim));
                }
            }
            (false, &[rows, dim]) if rows == batch.rows => {
                vectors.extend(data.chunks_exact(dim).map(<[f32]>::to_vec));
            }
            _ => return Err(unexpected()),
        }
        vectors.iter_mut().for_each(|v| l2_normalize(v));
        Ok(vectors)
    }
}

impl Embedder for OnnxEmbedder {
    fn model_id(&self) -> &str {
        &self.config.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self.encode(texts)?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let batches = self.plan_batches(&order, &encodings);

        let per_batch = self.run_batches(&batches, &encodings)?;
        let mut vectors = vec![Vec::new(); texts.len()];
        for (batch, batch_vectors) in batches.iter().zip(per_batch) {
            for (&text, vector) in batch.iter().zip(batch_vectors) {
                vectors[text] = vector;
            }
        }
        Ok(vectors)
    }
}

fn load_tokenizer(config: &OnnxConfig) -> Result<(Tokenizer, usize)> {
    let tokenizer = Tokenizer::from_file(&config.tokenizer)
        .map_err(|e| tokenizer_error(&config.tokenizer, e.to_string()))?;
    let max_tokens = config
        .max_tokens
        .or_else(|| tokenizer.get_truncation().map(|t| t.max_length))
        .unwrap_or(FALLBACK_MAX_TOKENS);
    Ok((tokenizer, max_tokens))
}

/// Leaves padding to the batches (each padded to its longest text, not to the tokenizer's fixed
/// length) and truncates at `max_tokens`; returns the padding token's id.
pub(crate) fn unpadded(tokenizer: &mut Tokenizer, max_tokens: usize, path: &Path) -> Result<u32> {
    let pad_id = tokenizer.get_padding().map_or(0, |padding| padding.pad_id);
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(|e| tokenizer_error(path, e.to_string()))?;
    Ok(pad_id)
}

pub(crate) fn tokenizer_error(path: &Path, detail: String) -> EmbedError {
    EmbedError::Tokenizer {
        path: path.to_path_buf(),
        detail,
    }
}

pub(crate) fn model_inputs(
    session: &Session,
) -> std::result::Result<Vec<(String, ModelInput)>, String> {
    let mut inputs = Vec::new();
    for outlet in session.inputs() {
        let kind = match outlet.name() {
            "input_ids" => ModelInput::Ids,
            "attention_mask" => ModelInput::AttentionMask,
            "token_type_ids" => ModelInput::TokenTypes,
            other => {
                return Err(format!(
                    "input {other:?} is not one a text tokenizer fills \
                     (expected input_ids, attention_mask, token_type_ids)"
                ))
            }
        };
        inputs.push((outlet.name().to_string(), kind));
    }
    if !inputs.iter().any(|(_, kind)| *kind == ModelInput::Ids) {
        return Err("the model has no input_ids input".to_string());
    }
    Ok(inputs)
}

fn model_output(session: &Session) -> std::result::Result<ModelOutput, String> {
    let outputs = session.outputs();
    if let Some(sentence) = outputs.iter().find(|o| o.name() == "sentence_embedding") {
        return Ok(ModelOutput::SentenceVectors(sentence.name().to_string()));
    }
    outputs
        .first()
        .map(|o| ModelOutput::TokenStates(o.name().to_string()))
        .ok_or_else(|| "the model has no outputs".to_string())
}
