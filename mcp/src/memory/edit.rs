//! Editing memories: update and delete one (logged in Mem0's history when the system is Mem0,
//! in the same engine batch as the change; then the system brings what it derives from the
//! record in line, as the hybrid memory's session records), Mem0's history, and deleting
//! everything of a user: their namespaces, queued dialogs, opened systems and maps, then a
//! compaction that leaves no byte of it in the store.

use mb_baselines::mem0::ops::MemoryEventKind;
use mb_baselines::mem0::HistoryEvent;
use mb_engine::{Batch, NewRecord, Record, RecordId};

use crate::error::McpError;
use crate::memory::service::{MemoryService, Owner};
use crate::tenant::Tenant;

/// Mem0's state key of its next history entry (`mb_baselines::mem0`'s `NEXT_EVENT`).
const MEM0_NEXT_EVENT: &str = "next_history";
/// Mem0's attribute naming a memory (`mem<n>`).
const DOC_ID: &str = "doc_id";

/// What deleting a user removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forgotten {
    /// Namespaces dropped (the user's and their agents').
    pub namespaces: usize,
    /// Queued dialogs dropped before they were memorized.
    pub queued: usize,
}

impl MemoryService {
    /// Adds a Mem0 history entry for a change of record `old` to `batch`, when the system is
    /// Mem0 (its own numbering and layout, so `memory_history` lists it in order).
    fn log_history(
        &self,
        namespace: &str,
        batch: &mut Batch,
        old: &Record,
        event: MemoryEventKind,
        new_text: Option<&str>,
    ) -> Result<(), McpError> {
        if self.system() != "mem0" {
            return Ok(());
        }
        let next: u64 = self
            .engine
            .get_state(namespace, MEM0_NEXT_EVENT)?
            .unwrap_or(0);
        let entry = HistoryEvent {
            memory: old.attribute(DOC_ID).unwrap_or_default().to_string(),
            event,
            old_memory: Some(old.text.clone()),
            new_memory: new_text.map(str::to_string),
            at_ms: mb_core::clock::now_ms(),
        };
        batch.put_state(format!("history/{next:012}"), &entry)?;
        batch.put_state(MEM0_NEXT_EVENT, &(next + 1))?;
        Ok(())
    }

    /// Replaces the text of one record (by the id the tools show; re-embedded when the system
    /// embeds), keeping its id and attributes; Mem0 logs it as an `UPDATE`.
    pub async fn update(&self, owner: &Owner, id: u64, text: &str) -> Result<Record, McpError> {
        let namespace = self.namespace(owner);
        let lock = self.lock_of(&namespace);
        let _write = lock.lock().await;
        let old = self.get(owner, id)?;
        let mut record = NewRecord::new(text).with_created_at_ms(old.created_at_ms);
        record.attributes = old.attributes.clone();
        if let Some(embedder) = self.embedder_for_edit()? {
            let vector = embedder
                .embed_one(text)
                .map_err(|e| McpError::Config(format!("embedding the new text: {e}")))?;
            record = record.with_vector(embedder.model_id(), vector);
        }
        let mut batch = Batch::new();
        batch.update(old.id, record);
        self.log_history(
            &namespace,
            &mut batch,
            &old,
            MemoryEventKind::Update,
            Some(text),
        )?;
        self.engine.write(&namespace, batch)?;
        self.open(owner)?.system.record_edited(&old)?;
        self.get(owner, id)
    }

    /// Deletes one record (by the id the tools show); false when there was none. Mem0 logs it
    /// as a `DELETE`.
    pub async fn delete(&self, owner: &Owner, id: u64) -> Result<bool, McpError> {
        let namespace = self.namespace(owner);
        if !self.exists(&namespace) {
            return Ok(false);
        }
        let lock = self.lock_of(&namespace);
        let _write = lock.lock().await;
        let Some(old) = self
            .engine
            .get(&namespace, self.ids(&owner.tenant)?.record(id))?
        else {
            return Ok(false);
        };
        let mut batch = Batch::new();
        batch.delete(old.id);
        self.log_history(&namespace, &mut batch, &old, MemoryEventKind::Delete, None)?;
        let deleted = self.engine.write(&namespace, batch)?.deleted == 1;
        self.open(owner)?.system.record_edited(&old)?;
        Ok(deleted)
    }

    /// Mem0's log of memory changes for `owner` (empty before the first dialog), each event with
    /// the record of the memory it is about when the namespace's doc-id map knows it (a memory
    /// deleted before the server started is known by its doc id only), so that the history
    /// names memories by the ids the other tools take.
    pub fn history_of_records(
        &self,
        owner: &Owner,
    ) -> Result<Vec<(Option<RecordId>, HistoryEvent)>, McpError> {
        let events = self.history(owner)?;
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let namespace = self.namespace(owner);
        self.refresh_doc_ids(&namespace)?;
        Ok(events
            .into_iter()
            .map(|event| (self.doc_record(&namespace, &event.memory), event))
            .collect())
    }

    /// Mem0's log of memory changes for `owner` (empty before the first dialog).
    pub fn history(&self, owner: &Owner) -> Result<Vec<HistoryEvent>, McpError> {
        if self.system() != "mem0" {
            return Err(McpError::Config(format!(
                "{} keeps no history (start the server with --memory-system mem0)",
                self.system()
            )));
        }
        if !self.exists(&self.namespace(owner)) {
            return Ok(Vec::new());
        }
        let opened = self.open(owner)?;
        match &opened.mem0 {
            Some(mem0) => Ok(mem0.history()?),
            None => Ok(Vec::new()),
        }
    }

    /// Deletes everything of `user_id` in `tenant` (adds of the user arriving meanwhile are
    /// refused, see [`crate::memory::gate`]): their queued dialogs (waiting for any being
    /// memorized to finish), their namespaces and their agents' (records, vectors, postings,
    /// state such as Mem0's history), the opened systems and maps; then compacts the store so
    /// no byte of it is left on disk.
    pub async fn delete_user(&self, tenant: &Tenant, user_id: &str) -> Result<Forgotten, McpError> {
        let own = self.namespace(&Owner {
            tenant: tenant.clone(),
            user_id: user_id.to_string(),
            agent_id: None,
        });
        // Adds of this user already past the gate are queued before the purge below; later
        // ones are refused until this deletion has answered.
        let _pass = self.gate.begin_delete(&own).await?;
        // Below the user's namespace: their agents' and what systems derive from either
        // (user ids hold no `/`, so no other user's namespace starts so).
        let below = format!("{own}/");
        let matches = |ns: &str| ns == own || ns.starts_with(&below);
        let purged = self.scheduler.purge(tenant.name(), matches);
        self.scheduler.wait_idle(matches).await;
        // Queued records of this user that the schedule no longer held (a job that failed
        // for good stays in the durable queue).
        let queued = self.delete_queued(tenant, &matches)?;
        let names: Vec<String> = self
            .engine
            .namespaces()
            .into_iter()
            .map(|info| info.name)
            .filter(|ns| matches(ns))
            .collect();
        self.close_namespaces(matches);
        let engine = self.engine.clone();
        let dropped = tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            engine.forget(&refs)
        })
        .await
        .map_err(|e| McpError::Io(format!("forgetting: {e}")))??;
        Ok(Forgotten {
            namespaces: dropped,
            queued: purged.len().max(queued),
        })
    }
}
