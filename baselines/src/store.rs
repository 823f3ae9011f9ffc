//! Memory units stored as engine records, shared by the retrieval baselines.
//!
//! A unit is one record: the searched text as the record text, the returned content as its
//! body (when it differs), upstream's document id and the covered corpus turns as attributes.
//! A batch of units is one engine write, so a dialog or corpus is memorized entirely or not at
//! all.

use std::sync::Arc;

use mb_embed::Embedder;
use mb_engine::{Analyzer, Engine, Hit, NamespaceOptions, NewRecord, Record};

use crate::error::MemoryError;
use crate::system::{MemoryContext, MemoryStats, Retrieved};
use crate::units::Unit;

/// The attribute holding a unit's document id in upstream's scheme.
pub(crate) const DOC_ID: &str = "doc_id";
/// The attribute listing the corpus turns a unit covers, comma-separated.
pub(crate) const TURNS: &str = "turns";

/// The analyzer a memory's lexical index uses: Whoosh parity, or jieba for memories holding
/// Chinese rows when the CJK analyzer is enabled.
pub fn analyzer(context: &MemoryContext) -> Analyzer {
    if context.settings.cjk_analyzer() && context.lang == mb_core::Lang::Zh {
        Analyzer::Cjk
    } else {
        Analyzer::Standard
    }
}

/// Creates the context's namespace if needed.
pub fn ensure_namespace(context: &MemoryContext, namespace: &str) -> Result<(), MemoryError> {
    context.engine.ensure_namespace(
        namespace,
        NamespaceOptions::default().with_analyzer(analyzer(context)),
    )?;
    Ok(())
}

/// The context's embedder, or an error naming `system`, which cannot run without one.
pub fn required_embedder(
    context: &MemoryContext,
    system: &str,
) -> Result<Arc<dyn Embedder>, MemoryError> {
    context
        .embedder
        .clone()
        .ok_or_else(|| MemoryError::Config(format!("{system} needs an embedder")))
}

/// What the constructor of a memory that stores vectors in the engine opens first: the
/// context's embedder (see [`required_embedder`]), the context's namespace indexed with
/// `analyzer`, and the embedder's vector space.
pub fn open_embedding_memory(
    context: &MemoryContext,
    system: &str,
    analyzer: Analyzer,
) -> Result<Arc<dyn Embedder>, MemoryError> {
    let embedder = required_embedder(context, system)?;
    context.engine.ensure_namespace(
        &context.namespace,
        NamespaceOptions::default().with_analyzer(analyzer),
    )?;
    context.engine.create_space(embedder.space())?;
    Ok(embedder)
}

/// The record storing a unit (with its vector, when given).
pub fn unit_record(unit: &Unit, vector: Option<(&str, Vec<f32>)>) -> NewRecord {
    let mut record =
        NewRecord::new(unit.index_text.clone()).with_attribute(DOC_ID, unit.doc_id.clone());
    if unit.content != unit.index_text {
        record = record.with_body(unit.content.clone());
    }
    if !unit.turns.is_empty() {
        record = record.with_attribute(TURNS, unit.turns.join(","));
    }
    if let Some((space, vector)) = vector {
        record = record.with_vector(space, vector);
    }
    record
}

/// A search hit as a retrieved memory.
pub fn retrieved(hit: Hit) -> Retrieved {
    Retrieved {
        doc_id: hit.record.attribute(DOC_ID).unwrap_or_default().to_string(),
        score: hit.score,
        text: hit.record.content().to_string(),
        turns: record_turns(&hit.record),
    }
}

/// The turns a unit's record covers (its `turns` attribute).
pub fn record_turns(record: &Record) -> Vec<String> {
    record
        .attribute(TURNS)
        .map(|t| t.split(',').map(str::to_string).collect())
        .unwrap_or_default()
}

/// Number of units and bytes of stored text in `namespace` (zero when it does not exist).
pub fn stats(engine: &Engine, namespace: &str) -> Result<MemoryStats, MemoryError> {
    if engine.namespace(namespace).is_err() {
        return Ok(MemoryStats::default());
    }
    let mut stats = MemoryStats::default();
    for record in engine.records(namespace)? {
        let record = record?;
        stats.items += 1;
        stats.text_bytes +=
            (record.text.len() + record.body.as_ref().map_or(0, String::len)) as u64;
    }
    Ok(stats)
}

/// Deletes the units with the given document ids in one engine write.
pub fn delete_units(
    engine: &Engine,
    namespace: &str,
    doc_ids: &[String],
) -> Result<(), MemoryError> {
    let wanted: std::collections::HashSet<&str> = doc_ids.iter().map(String::as_str).collect();
    let mut batch = mb_engine::Batch::new();
    for record in engine.records(namespace)? {
        let record = record?;
        if record
            .attribute(DOC_ID)
            .is_some_and(|id| wanted.contains(id))
        {
            batch.delete(record.id);
        }
    }
    if !batch.is_empty() {
        engine.write(namespace, batch)?;
    }
    Ok(())
}
