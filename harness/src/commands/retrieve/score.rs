//! Scoring one question's ranking: unit recall and NDCG at each cut-off, turn-level recall
//! (`T@k`), recall within a context budget of tokens, and reciprocal rank.

use std::collections::HashSet;
use std::time::Duration;

use mb_baselines::Retrieved;
use mb_eval::metrics::retrieval::{
    budget_recall, hit_at_k, ndcg_at_k, recall_at_k, reciprocal_rank, turn_recall_at_k,
};

pub(crate) use mb_baselines::tokens::TokenCounter;

/// What is scored: the cut-offs and budgets asked for.
pub(crate) struct Cutoffs {
    /// Cut-offs `k`, ascending.
    pub ks: Vec<usize>,
    /// Context budgets in tokens, ascending.
    pub budgets: Vec<usize>,
}

/// One scored question.
pub(crate) struct Scored {
    /// Its group (LoCoMo category, LongMemEval question type).
    pub group: String,
    /// Unit recall at each cut-off.
    pub recall: Vec<f64>,
    /// Turn-level recall at each cut-off.
    pub turn_recall: Vec<f64>,
    /// NDCG at each cut-off.
    pub ndcg: Vec<f64>,
    /// Session hit at each cut-off: an evidence session among the first `k` distinct sessions
    /// of the units retrieved (each unit's first turn's session).
    pub session_hit: Vec<f64>,
    /// Recall within each budget.
    pub budget_recall: Vec<f64>,
    /// Reciprocal rank of the first relevant unit.
    pub mrr: f64,
    /// Time to retrieve.
    pub latency: Duration,
}

/// Scores `retrieved` against the evidence turns present in the corpus; `None` when no unit
/// covers any (nothing to find).
pub(crate) fn score(
    group: String,
    retrieved: &[Retrieved],
    evidence: &HashSet<&str>,
    relevant_units: &HashSet<&str>,
    cutoffs: &Cutoffs,
    tokens: &TokenCounter,
    latency: Duration,
) -> Option<Scored> {
    if relevant_units.is_empty() || evidence.is_empty() {
        return None;
    }
    let ranked: Vec<&str> = retrieved.iter().map(|r| r.doc_id.as_str()).collect();
    let turns: Vec<Vec<&str>> = retrieved
        .iter()
        .map(|r| r.turns.iter().map(String::as_str).collect())
        .collect();
    let turn_lists: Vec<&[&str]> = turns.iter().map(Vec::as_slice).collect();
    let sized: Vec<(usize, &[&str])> = retrieved
        .iter()
        .zip(&turn_lists)
        .map(|(r, t)| (tokens.count(&r.text), *t))
        .collect();
    let sessions: Vec<&str> = turns
        .iter()
        .filter_map(|t| t.first().map(|turn| session_of(turn)))
        .collect();
    let evidence_sessions: HashSet<&str> = evidence.iter().map(|t| session_of(t)).collect();
    let at = |f: &dyn Fn(usize) -> Option<f64>, cut: &[usize]| -> Vec<f64> {
        cut.iter().map(|&k| f(k).unwrap_or(0.0)).collect()
    };
    Some(Scored {
        group,
        recall: at(&|k| recall_at_k(&ranked, relevant_units, k), &cutoffs.ks),
        turn_recall: at(&|k| turn_recall_at_k(&turn_lists, evidence, k), &cutoffs.ks),
        ndcg: at(&|k| ndcg_at_k(&ranked, relevant_units, k), &cutoffs.ks),
        session_hit: at(&|k| hit_at_k(&sessions, &evidence_sessions, k), &cutoffs.ks),
        budget_recall: at(&|b| budget_recall(&sized, evidence, b), &cutoffs.budgets),
        mrr: reciprocal_rank(&ranked, relevant_units).unwrap_or(0.0),
        latency,
    })
}

/// The session of a LoCoMo turn id (`D3:12` → `D3`).
fn session_of(turn: &str) -> &str {
    turn.split_once(':').map_or(turn, |(session, _)| session)
}
