//! Whole sessions as a prior on the hybrid memory's units: every session is also indexed whole
//! (its distinct lines, the dates and facts of its units; its vector the normalized sum of its
//! units' vectors) in a namespace beside the units' ([`namespace`]); a question ranks the
//! sessions as it ranks the units, and a unit gains `session_weight` times its session's score
//! (the best session's scaled to 1). A turn that matches little alone ranks higher when the
//! session around it matches the question as a whole.

use std::collections::{HashMap, HashSet};

use mb_engine::{Batch, Engine, Filter, Record};

use super::fusion;
use super::rounds::Exchange;
use super::HybridSettings;
use crate::error::MemoryError;
use crate::store::{record_turns, unit_record};
use crate::units::Unit;

/// The attribute holding a unit's session key ([`Exchange::session`]).
pub const SESSION: &str = "session";

/// The namespace holding the sessions of the memory in `units`.
pub fn namespace(units: &str) -> String {
    format!("{units}/hybrid-sessions")
}

/// The id of a session's record: derived from its first unit's, so that deleting a corpus's
/// units by id (with `session ` in front) deletes its sessions too.
pub fn doc_id(session: &str) -> String {
    format!("session {session}")
}

/// One unit as its session's record is built from it: its key (indexed text), turns and
/// vector.
type Member<'a> = (&'a str, &'a [String], &'a [f32]);

/// One record per session of `exchanges` (consecutive units of a session together), each
/// `(exchange, key, vector)` as the units were written.
pub fn records(units: &[(&Exchange, &str, &[f32])], space: &str) -> Batch {
    let mut batch = Batch::new();
    let mut start = 0;
    while start < units.len() {
        let key = &units[start].0.session;
        let end = units[start..]
            .iter()
            .position(|(e, _, _)| &e.session != key)
            .map_or(units.len(), |n| start + n);
        let members: Vec<Member<'_>> = units[start..end]
            .iter()
            .map(|(e, k, v)| (*k, e.turns.as_slice(), *v))
            .collect();
        batch.put(record(key, &members, space));
        start = end;
    }
    batch
}

/// Rewrites the record of session `key` of the memory in `units` from the session's units as
/// they are now (after one was edited or deleted from outside the memory), or removes it
/// when none is left, so that no session record keeps text its units no longer hold. The
/// units' stored vectors stand in for the embeddings they were written with (the same,
/// normalized).
pub fn rebuild(engine: &Engine, units: &str, key: &str, space: &str) -> Result<(), MemoryError> {
    let mut kept: Vec<(Record, Vec<String>, Vec<f32>)> = Vec::new();
    let of_session = Filter::new().attribute(SESSION, key);
    for record in engine.records_where(units, &of_session)? {
        let vector = engine
            .get_vectors(units, record.id)?
            .into_iter()
            .find(|(name, _)| name == space)
            .map(|(_, vector)| vector)
            .unwrap_or_default();
        let turns = record_turns(&record);
        kept.push((record, turns, vector));
    }
    let ns = namespace(units);
    let mut batch = Batch::new();
    for record in engine.records_where(&ns, &of_session)? {
        batch.delete(record.id);
    }
    if !kept.is_empty() {
        let members: Vec<Member<'_>> = kept
            .iter()
            .map(|(r, turns, v)| (r.text.as_str(), turns.as_slice(), v.as_slice()))
            .collect();
        batch.put(record(key, &members, space));
    }
    if !batch.is_empty() {
        engine.write(&ns, batch)?;
    }
    Ok(())
}

/// The record of session `key` made of its units: their distinct key lines, their turns, the
/// normalized sum of their vectors.
fn record(key: &str, units: &[Member<'_>], space: &str) -> mb_engine::NewRecord {
    let mut seen = HashSet::new();
    let mut text: Vec<&str> = Vec::new();
    let mut turns: Vec<String> = Vec::new();
    let mut sum: Vec<f32> = Vec::new();
    for (index_text, unit_turns, vector) in units {
        for line in index_text.lines() {
            if seen.insert(line) {
                text.push(line);
            }
        }
        for turn in unit_turns.iter() {
            if !turns.contains(turn) {
                turns.push(turn.clone());
            }
        }
        if sum.is_empty() {
            sum = vec![0.0; vector.len()];
        }
        for (s, v) in sum.iter_mut().zip(vector.iter()) {
            *s += v;
        }
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        sum.iter_mut().for_each(|x| *x /= norm);
    }
    let text = text.join("\n");
    let unit = Unit {
        doc_id: doc_id(key),
        index_text: text.clone(),
        content: text,
        turns,
    };
    unit_record(&unit, Some((space, sum))).with_attribute(SESSION, key.to_string())
}

/// The sessions' scores for a question (its content words for BM25, its vector for the
/// embedding side), fused as the units' are and scaled so that the best is 1.
pub fn scores(
    engine: &Engine,
    units: &str,
    words: &str,
    query: Option<(&str, &[f32])>,
    settings: &HybridSettings,
) -> Result<HashMap<String, f32>, MemoryError> {
    let ns = namespace(units);
    let fused = fusion::search(engine, &ns, words, query, settings.candidates, settings)?;
    let best = fused.first().map_or(0.0, |h| h.score);
    Ok(fused
        .into_iter()
        .filter(|_| best > 0.0)
        .filter_map(|hit| {
            let key = hit.record.attribute(SESSION)?.to_string();
            Some((key, hit.score / best))
        })
        .collect())
}
