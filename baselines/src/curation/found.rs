//! The records behind what a system retrieves, and searches that keep only memories whose
//! metadata match a filter.
//!
//! A system answers with its own ids (`conv_3_1`, `mem7`, `note2`); [`RecordIndex`] maps them to
//! engine records, reading only the records written since it last looked, so that search
//! results carry the one id the other calls take, and their metadata.

use std::collections::HashMap;
use std::sync::Mutex;

use mb_core::Lang;
use mb_engine::{Engine, Record, RecordId};

use super::filter::MetadataFilter;
use crate::error::MemoryError;
use crate::history::HistoryEvent;
use crate::metadata::Metadata;
use crate::settings::MAX_RETRIEVE_K;
use crate::system::{MemorySystem, Retrieved};

/// The attribute naming a unit in the systems' records.
const UNIT_ID: &str = "doc_id";

/// One search result: what the system retrieved, with its record when it has one (units kept
/// outside records, as MemoryOS's pages, have none).
#[derive(Debug, Clone)]
pub struct Found {
    /// The system's answer.
    pub retrieved: Retrieved,
    /// Its record.
    pub record: Option<Record>,
}

/// A namespace's records by the system's unit id, read incrementally.
#[derive(Debug, Default)]
pub struct RecordIndex {
    inner: Mutex<Index>,
}

#[derive(Debug, Default)]
struct Index {
    by_unit: HashMap<String, RecordId>,
    through: RecordId,
}

impl RecordIndex {
    /// Reads the records of `namespace` written since the index last looked, adds their unit
    /// ids, and returns them.
    pub fn refresh(&self, engine: &Engine, namespace: &str) -> Result<Vec<Record>, MemoryError> {
        let mut index = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let fresh: Vec<Record> = engine
            .records_after(namespace, index.through)?
            .collect::<Result<_, _>>()?;
        for record in &fresh {
            if let Some(unit) = record.attribute(UNIT_ID) {
                index.by_unit.insert(unit.to_string(), record.id);
            }
            index.through = index.through.max(record.id);
        }
        Ok(fresh)
    }

    /// The record id of unit `unit`, as the index last read it.
    pub fn record_of(&self, unit: &str) -> Option<RecordId> {
        let index = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        index.by_unit.get(unit).copied()
    }

    /// The record of the memory each of Mem0's history `events` is about: the one the event
    /// names (updates and deletes, so a deleted memory keeps its id), else the one its unit id
    /// maps to now (an add whose memory was never edited since).
    pub fn history_records(
        &self,
        engine: &Engine,
        namespace: &str,
        events: &[HistoryEvent],
    ) -> Result<Vec<Option<RecordId>>, MemoryError> {
        self.refresh(engine, namespace)?;
        let named: HashMap<&str, RecordId> = events
            .iter()
            .filter_map(|e| Some((e.memory.as_str(), e.record?)))
            .collect();
        Ok(events
            .iter()
            .map(|e| {
                e.record
                    .or_else(|| named.get(e.memory.as_str()).copied())
                    .or_else(|| self.record_of(&e.memory))
            })
            .collect())
    }

    /// `retrieved` with their records (refreshing the index first when one is unknown).
    pub fn resolve(
        &self,
        engine: &Engine,
        namespace: &str,
        retrieved: Vec<Retrieved>,
    ) -> Result<Vec<Found>, MemoryError> {
        if retrieved
            .iter()
            .any(|r| self.record_of(&r.doc_id).is_none())
        {
            self.refresh(engine, namespace)?;
        }
        retrieved
            .into_iter()
            .map(|retrieved| {
                let record = match self.record_of(&retrieved.doc_id) {
                    Some(id) => engine.get(namespace, id)?,
                    None => None,
                };
                Ok(Found { retrieved, record })
            })
            .collect()
    }
}

/// One page of a namespace's memories in the order they were stored: up to `limit` records
/// after record `after` whose metadata match `filter` (all without one), and whether more
/// follow. Reads up to the `limit + 1`st match: without a filter `limit + 1` records, whatever
/// the namespace's size.
pub fn page(
    engine: &Engine,
    namespace: &str,
    after: RecordId,
    limit: usize,
    filter: Option<&MetadataFilter>,
) -> Result<(Vec<Record>, bool), MemoryError> {
    let mut records = Vec::with_capacity(limit.saturating_add(1).min(1024));
    for record in engine.records_after(namespace, after)? {
        let record = record?;
        if filter.is_none_or(|f| f.matches(&Metadata::of(&record))) {
            records.push(record);
            if records.len() > limit {
                break;
            }
        }
    }
    let more = records.len() > limit;
    records.truncate(limit);
    Ok((records, more))
}

/// The `k` memories of `system` most relevant to `query` whose metadata match `filter` (all
/// of them without one), best first. With a filter the system is asked for ever more
/// candidates (4× each time, at most [`MAX_RETRIEVE_K`] or the memory's size) until `k` match.
pub async fn search(
    system: &dyn MemorySystem,
    index: &RecordIndex,
    query: &str,
    lang: Lang,
    k: usize,
    filter: Option<&MetadataFilter>,
) -> Result<Vec<Found>, MemoryError> {
    let context = system.context();
    let (engine, namespace) = (&context.engine, context.namespace.as_str());
    let Some(filter) = filter else {
        let retrieved = system.retrieve(query, lang, k).await?;
        return index.resolve(engine, namespace, retrieved);
    };
    let size = usize::try_from(engine.count(namespace)?).unwrap_or(usize::MAX);
    let ceiling = size.clamp(k, MAX_RETRIEVE_K.max(k));
    let mut asked = k;
    loop {
        let retrieved = system.retrieve(query, lang, asked).await?;
        let exhausted = retrieved.len() < asked || asked >= ceiling;
        let mut matched: Vec<Found> = index
            .resolve(engine, namespace, retrieved)?
            .into_iter()
            .filter(|found| {
                found
                    .record
                    .as_ref()
                    .is_some_and(|r| filter.matches(&Metadata::of(r)))
            })
            .collect();
        if matched.len() >= k || exhausted {
            matched.truncate(k);
            return Ok(matched);
        }
        asked = asked.saturating_mul(4).min(ceiling);
    }
}
