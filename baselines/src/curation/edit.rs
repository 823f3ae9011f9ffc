//! Editing one memory from outside its system (the memory tools', Python's `update` and
//! `delete`): the change, the system's log of it (Mem0's history) in the same engine batch, then
//! the system bringing what it derives from the record in line (the hybrid memory's sessions).

use mb_engine::{Batch, NewRecord, Record, RecordId};

use crate::embedding::embed_text;
use crate::error::MemoryError;
use crate::metadata::Metadata;
use crate::system::MemorySystem;

/// Replaces the text of record `id` of `system`'s memory, keeping its id, creation time and
/// attributes (its metadata too, unless `metadata` replaces it); a record with vectors is
/// embedded again by the system's embedder. `None` when there is no such record.
pub async fn update(
    system: &dyn MemorySystem,
    id: RecordId,
    text: &str,
    metadata: Option<&Metadata>,
) -> Result<Option<Record>, MemoryError> {
    let context = system.context();
    let (engine, namespace) = (&context.engine, &context.namespace);
    let Some(old) = engine.get(namespace, id)? else {
        return Ok(None);
    };
    let mut record = NewRecord::new(text).with_created_at_ms(old.created_at_ms);
    record.attributes = old.attributes.clone();
    if let Some(metadata) = metadata {
        record = metadata.stamp(record);
    }
    if !engine.get_vectors(namespace, id)?.is_empty() {
        let embedder = context.embedder.as_ref().ok_or_else(|| {
            MemoryError::Config(format!(
                "memory {} holds vectors but its system has no embedder to embed its new text",
                id.0
            ))
        })?;
        let vector = embed_text(embedder, text.to_string()).await?;
        record = record.with_vector(embedder.model_id(), vector);
    }
    let mut batch = Batch::new();
    batch.update(old.id, record);
    system.log_edit(&mut batch, &old, Some(text))?;
    engine.write(namespace, batch)?;
    system.record_edited(&old)?;
    Ok(engine.get(namespace, id)?)
}

/// Deletes record `id` of `system`'s memory; returns it as it was (`None`: there was none).
pub fn delete(system: &dyn MemorySystem, id: RecordId) -> Result<Option<Record>, MemoryError> {
    let context = system.context();
    let (engine, namespace) = (&context.engine, &context.namespace);
    let Some(old) = engine.get(namespace, id)? else {
        return Ok(None);
    };
    let mut batch = Batch::new();
    batch.delete(old.id);
    system.log_edit(&mut batch, &old, None)?;
    engine.write(namespace, batch)?;
    system.record_edited(&old)?;
    Ok(Some(old))
}
