//! LongMemEval's retrieval evaluation as its official scripts define it: the corpus of one
//! question (its haystack; by default only the user's turns), which ids are evidence, and
//! `recall_any@k`, `recall_all@k` and `ndcg_any@k` at turn and session level.
//!
//! Ids: a turn is `<session_id>_<turn number>` (numbered from 1 over all the session's turns);
//! evidence sessions have `answer` in their ids. A turn of an evidence session that does not
//! hold the answer (`has_answer` false) is relabelled with `noans` in place of `answer`, so that
//! only the turns that hold it count. Gold = every id containing `answer`. The paper's
//! "Recall@k" is `recall_all@k`.

use std::collections::HashSet;

use crate::corpus::{Conversation, Session, Turn};

use super::data::Instance;
use mb_core::Role;

/// The cut-offs the official scripts report.
pub const CUTOFFS: [usize; 6] = [1, 3, 5, 10, 30, 50];

/// Which turns a memory is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// The user's turns only (the official default).
    User,
    /// Every turn; an assistant turn counts as evidence when it holds the answer.
    All,
}

/// The official id of turn `number` (from 1) of `session`, relabelled `noans` in an evidence
/// session when it does not hold the answer.
pub fn turn_id(session: &str, number: usize, has_answer: Option<bool>) -> String {
    let id = format!("{session}_{number}");
    if session.contains("answer") && has_answer != Some(true) {
        id.replace("answer", "noans")
    } else {
        id
    }
}

/// The session of a turn id (its last `_<number>` removed).
pub fn session_of(turn_id: &str) -> &str {
    turn_id
        .rsplit_once('_')
        .map_or(turn_id, |(session, _)| session)
}

impl Instance {
    /// The history as a conversation to memorize: one session per haystack session (its date
    /// as written), turns spoken by `user` or `assistant` with their official ids as turn ids.
    pub fn conversation(&self, history: History) -> Conversation {
        Conversation {
            speaker_a: Some("user".into()),
            speaker_b: Some("assistant".into()),
            sessions: self
                .sessions
                .iter()
                .map(|session| Session {
                    date_time: session.date.clone(),
                    turns: session
                        .turns
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| history == History::All || t.role == Role::User)
                        .map(|(i, t)| Turn {
                            speaker: match t.role {
                                Role::User => "user",
                                Role::Assistant | Role::System => "assistant",
                            }
                            .into(),
                            dia_id: turn_id(&session.id, i + 1, t.has_answer),
                            text: t.content.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// Whether the official evaluation scores this question: not an abstention, and some turn
    /// the memory is given holds the answer.
    pub fn is_scored(&self, history: History) -> bool {
        !self.is_abstention()
            && self.sessions.iter().any(|s| {
                s.turns.iter().any(|t| {
                    t.has_answer == Some(true) && (history == History::All || t.role == Role::User)
                })
            })
    }
}

/// `recall_any`, `recall_all` and `ndcg_any` of one ranking at one cut-off.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scores {
    /// 1 when any gold id is in the top k.
    pub recall_any: f64,
    /// 1 when every gold id is in the top k (the paper's "Recall@k").
    pub recall_all: f64,
    /// Binary-relevance NDCG (positions 1 and 2 both weigh 1, as the official `dcg`).
    pub ndcg_any: f64,
}

fn is_gold(id: &str) -> bool {
    id.contains("answer")
}

/// The official `dcg`: `rel₁ + Σ_{i≥2} relᵢ / log2(i)`.
fn dcg(relevances: impl Iterator<Item = bool>) -> f64 {
    relevances
        .enumerate()
        .map(|(i, relevant)| match (i, relevant) {
            (_, false) => 0.0,
            (0, true) => 1.0,
            (i, true) => 1.0 / ((i + 1) as f64).log2(),
        })
        .sum()
}

/// Scores a ranking of ids (best first, no repeats) over a corpus whose ids are `corpus`, at
/// cut-off `k`.
pub fn evaluate(ranked: &[&str], corpus: &[&str], k: usize) -> Scores {
    let gold: HashSet<&str> = corpus.iter().copied().filter(|id| is_gold(id)).collect();
    let top: HashSet<&str> = ranked.iter().take(k).copied().collect();
    let ideal = dcg((0..corpus.iter().filter(|id| is_gold(id)).count())
        .map(|_| true)
        .take(k));
    let actual = dcg(ranked.iter().take(k).map(|id| is_gold(id)));
    Scores {
        recall_any: f64::from(u8::from(gold.iter().any(|g| top.contains(g)))),
        recall_all: f64::from(u8::from(gold.iter().all(|g| top.contains(g)))),
        ndcg_any: if ideal > 0.0 { actual / ideal } else { 0.0 },
    }
}

/// Scores a ranking of turn ids at session level, as the official `turn2session`: ids become
/// their sessions (repeats kept, as the official code scores positions), and the cut-off grows
/// from `k` until the top covers `k` distinct sessions or passes the corpus size. The cut-off
/// never shrinks to the ranking's length: a system returning fewer than `k` units is scored
/// against the ideal of the whole cut-off, as the official NDCG is.
pub fn evaluate_as_sessions(ranked_turns: &[&str], corpus_turns: &[&str], k: usize) -> Scores {
    let ranked: Vec<&str> = ranked_turns.iter().map(|t| session_of(t)).collect();
    let corpus: Vec<&str> = corpus_turns.iter().map(|t| session_of(t)).collect();
    let distinct = |n: usize| ranked.iter().take(n).collect::<HashSet<_>>().len();
    let mut effective = k;
    while effective <= corpus.len() && distinct(effective) < k {
        effective += 1;
    }
    let gold: HashSet<&str> = corpus.iter().copied().filter(|id| is_gold(id)).collect();
    let top: HashSet<&str> = ranked.iter().take(effective).copied().collect();
    let ideal = dcg(corpus
        .iter()
        .filter(|id| is_gold(id))
        .map(|_| true)
        .take(effective));
    let actual = dcg(ranked.iter().take(effective).map(|id| is_gold(id)));
    Scores {
        recall_any: f64::from(u8::from(gold.iter().any(|g| top.contains(g)))),
        recall_all: f64::from(u8::from(gold.iter().all(|g| top.contains(g)))),
        ndcg_any: if ideal > 0.0 { actual / ideal } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six sessions of one turn each; sessions 1 and 2 hold the answer.
    const CORPUS: [&str; 6] = ["answer_1_1", "answer_2_1", "s3_1", "s4_1", "s5_1", "s6_1"];

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn a_ranking_shorter_than_k_is_scored_against_the_whole_ideal() {
        // Official: effective k grows to 7 (past the corpus); ideal = dcg([1, 1]) = 1 + 1/log2(2)
        // = 2; actual = dcg([1]) = 1; NDCG 0.5.
        let scores = evaluate_as_sessions(&["answer_1_1"], &CORPUS, 5);
        assert!(close(scores.ndcg_any, 0.5), "{scores:?}");
        assert_eq!((scores.recall_any, scores.recall_all), (1.0, 0.0));
    }

    #[test]
    fn the_second_position_weighs_as_much_as_the_first() {
        // Official dcg: rel1 + rel2/log2(2) + rel3/log2(3)...: [0, 1] gives 1 against the ideal 2.
        let scores = evaluate_as_sessions(&["s3_1", "answer_2_1"], &CORPUS, 2);
        assert!(close(scores.ndcg_any, 0.5), "{scores:?}");
        // [0, 0, 1] at k = 3: 1/log2(3) against the ideal 2.
        let scores = evaluate_as_sessions(&["s3_1", "s4_1", "answer_1_1"], &CORPUS, 3);
        assert!(
            close(scores.ndcg_any, 1.0 / 3f64.log2() / 2.0),
            "{scores:?}"
        );
    }

    #[test]
    fn repeated_sessions_grow_the_cut_off_and_count_each_position() {
        // Corpus sessions [a1, a1, s2, s2, s3]; the top 2 turns cover one session, so k grows
        // to 3. Ideal dcg([1, 1, 0]) = 2, actual dcg([1, 1, 0]) = 2.
        let corpus = ["answer_1_1", "answer_1_2", "s2_1", "s2_2", "s3_1"];
        let ranked = ["answer_1_2", "answer_1_1", "s2_1", "s3_1"];
        let scores = evaluate_as_sessions(&ranked, &corpus, 2);
        assert!(close(scores.ndcg_any, 1.0), "{scores:?}");
        assert_eq!((scores.recall_any, scores.recall_all), (1.0, 1.0));
        // Gold second and third: the top 2 already cover two sessions, so k stays 2; actual
        // dcg([0, 1]) = 1 against the ideal dcg([1, 1]) = 2.
        let ranked = ["s2_1", "answer_1_1", "answer_1_2", "s3_1"];
        let scores = evaluate_as_sessions(&ranked, &corpus, 2);
        assert!(close(scores.ndcg_any, 0.5), "{scores:?}");
        // At k = 3 the top 3 cover two sessions, so k grows to 4: actual 1/log2(2) + 1/log2(3)
        // against the ideal dcg([1, 1, 0, 0]) = 2.
        let scores = evaluate_as_sessions(&ranked, &corpus, 3);
        let expected = (1.0 + 1.0 / 3f64.log2()) / 2.0;
        assert!(close(scores.ndcg_any, expected), "{scores:?}");
    }
}
