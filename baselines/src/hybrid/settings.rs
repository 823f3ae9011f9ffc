//! The hybrid memory's settings (`[hybrid]` in `configs/memory/hybrid.toml`), defaulting to
//! the values tuned on the LoCoMo development conversations (docs/memory-systems.md).

use serde::{Deserialize, Serialize};

use crate::settings::OwnSettings;

/// The hybrid memory's own keys in its settings file: the `[hybrid]` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct HybridFile {
    /// How the hybrid memory cuts, indexes and ranks.
    pub hybrid: HybridSettings,
}

impl HybridFile {
    /// A file's own keys holding `hybrid`.
    pub fn new(hybrid: HybridSettings) -> HybridFile {
        HybridFile { hybrid }
    }
}

impl OwnSettings for HybridFile {
    fn check(&self) -> Result<(), String> {
        self.hybrid.check()
    }
}

/// What one memory unit holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitSize {
    /// Every turn with the reply to it (LongMemEval's "round"), so consecutive rounds share a
    /// turn and every turn is found with the context before and after it.
    Round,
    /// Rounds that do not overlap: a turn with the reply, then the next turn.
    DisjointRound,
    /// One turn.
    Turn,
}

/// How the two rankings become one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// Weighted reciprocal rank fusion: `weight / (rrf_k + rank)` per ranking.
    Rrf,
    /// Weighted sum of each ranking's min-max normalized scores.
    Scores,
}

/// How the hybrid memory cuts, indexes and ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct HybridSettings {
    /// What a unit holds.
    pub unit: UnitSize,
    /// Merge the facts the memory role extracts from a unit into its indexed text.
    pub key_facts: bool,
    /// Index and query Porter stems (`painted` finds `painting`); English memories only.
    pub stemming: bool,
    /// How the BM25 and embedding rankings are fused.
    pub fusion: Fusion,
    /// Weight of the BM25 ranking in the fusion.
    pub lexical_weight: f32,
    /// Weight of the embedding ranking in the fusion.
    pub dense_weight: f32,
    /// Reciprocal-rank-fusion constant: `weight / (rrf_k + rank)` per ranking.
    pub rrf_k: f32,
    /// Candidates each ranking contributes before fusion.
    pub candidates: usize,
    /// Bonus, in first-place fusion shares, for units dated in the time a question refers to
    /// (`last week`, `in May`), resolved against the memory's date.
    pub time_weight: f32,
    /// Return a unit whose text repeats a better-ranked one's only once.
    pub dedupe: bool,
    /// Bonus, in first-place fusion shares, for units of the sessions that match the question
    /// as a whole (whole sessions ranked as the units are, best scaled to 1); 0 indexes no
    /// sessions.
    pub session_weight: f32,
    /// The first this many fused candidates are reordered by a cross-encoder (a model call
    /// per candidate: hundreds of milliseconds per question on a CPU); 0 reranks nothing.
    pub rerank_candidates: usize,
    /// The cross-encoder: a directory holding `model.onnx` and `tokenizer.json`, or the name
    /// of one under a checkout's `.cache/models/` (`scripts/setup.sh` installs
    /// `ms-marco-minilm-l12-int8`).
    pub rerank_model: String,
    /// How much the reranker's score decides the reranked order against the fused score's
    /// (each normalized over the candidates): 1 orders by the reranker alone.
    pub rerank_blend: f32,
}

/// Most candidates a ranking may contribute before fusion.
pub const MAX_CANDIDATES: usize = 10_000;

/// Most candidates the cross-encoder may reorder.
pub const MAX_RERANK: usize = 1_000;

impl HybridSettings {
    /// Whether the memory keeps and ranks whole sessions (the session prior): on exactly when
    /// `session_weight` is above 0, the one place that reads it so.
    pub fn uses_sessions(&self) -> bool {
        self.session_weight > 0.0
    }

    /// Refuses values the fusion cannot use, naming the key (`[hybrid] <key>`): weights that are
    /// not finite or are negative, an `rrf_k` that is not finite or is negative (`-1` divides
    /// by zero at rank 1), a candidate count of 0 or above [`MAX_CANDIDATES`].
    pub fn check(&self) -> Result<(), String> {
        for (key, value) in [
            ("lexical_weight", self.lexical_weight),
            ("dense_weight", self.dense_weight),
            ("time_weight", self.time_weight),
            ("session_weight", self.session_weight),
            ("rrf_k", self.rrf_k),
            ("rerank_blend", self.rerank_blend),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(format!(
                    "[hybrid] {key} = {value}: give a finite number of at least 0"
                ));
            }
        }
        if self.candidates == 0 || self.candidates > MAX_CANDIDATES {
            return Err(format!(
                "[hybrid] candidates = {}: give 1 to {MAX_CANDIDATES}",
                self.candidates
            ));
        }
        if self.rerank_blend > 1.0 {
            return Err(format!(
                "[hybrid] rerank_blend = {}: give 0 to 1",
                self.rerank_blend
            ));
        }
        if self.rerank_candidates > MAX_RERANK {
            return Err(format!(
                "[hybrid] rerank_candidates = {}: give 0 to {MAX_RERANK}",
                self.rerank_candidates
            ));
        }
        Ok(())
    }
}

impl Default for HybridSettings {
    fn default() -> Self {
        HybridSettings {
            unit: UnitSize::Round,
            key_facts: true,
            stemming: true,
            fusion: Fusion::Scores,
            lexical_weight: 1.0,
            dense_weight: 0.7,
            rrf_k: 60.0,
            candidates: 50,
            time_weight: 1.0,
            dedupe: true,
            session_weight: 1.0,
            rerank_candidates: 0,
            rerank_model: "ms-marco-minilm-l12-int8".to_string(),
            rerank_blend: 1.0,
        }
    }
}
