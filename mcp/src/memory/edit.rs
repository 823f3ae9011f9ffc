//! Editing memories: update and delete one ([`mb_baselines::curation`]: the change and the
//! system's log of it, Mem0's history, in one engine batch, then the system bringing what it
//! derives from the record in line), the history with the ids the tools show, and deleting
//! everything of a user: their namespaces, queued dialogs, opened systems, then a compaction
//! that leaves no byte of it in the store.

use mb_baselines::curation::{self, Metadata};
use mb_baselines::mem0::HistoryEvent;
use mb_engine::{Record, RecordId};

use crate::error::McpError;
use crate::memory::service::MemoryService;
use crate::memory::Owner;
use crate::tenant::Tenant;

/// What deleting a user removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forgotten {
    /// Namespaces dropped (the user's and their agents').
    pub namespaces: usize,
    /// Queued dialogs dropped before they were memorized.
    pub queued: usize,
}

impl MemoryService {
    /// Replaces the text of one record (by the id the tools show; re-embedded when the system
    /// embeds), keeping its id and attributes, its metadata unless `metadata` replaces it; Mem0
    /// logs it as an `UPDATE`.
    pub async fn update(
        &self,
        owner: &Owner,
        id: u64,
        text: &str,
        metadata: Option<&Metadata>,
    ) -> Result<Record, McpError> {
        let namespace = self.namespace(owner);
        let missing = || McpError::NotFound(format!("memory {id} not found for this user"));
        if !self.exists(&namespace) {
            return Err(missing());
        }
        let lock = self.lock_of(&namespace);
        let _write = lock.lock().await;
        let record = self.ids(&owner.tenant)?.record(id);
        let opened = self.open(owner)?;
        curation::update(&*opened.system, record, text, metadata)
            .await?
            .ok_or_else(missing)
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
        let record = self.ids(&owner.tenant)?.record(id);
        let opened = self.open(owner)?;
        Ok(curation::delete(&*opened.system, record)?.is_some())
    }

    /// Mem0's log of memory changes for `owner` (empty before the first dialog), each event with
    /// the record of the memory it is about: the one the event names (updates and deletes), or
    /// the one the system's unit id maps to now (an add whose memory was never edited since),
    /// so that the history names memories by the ids the other tools take.
    pub fn history_of_records(
        &self,
        owner: &Owner,
    ) -> Result<Vec<(Option<RecordId>, HistoryEvent)>, McpError> {
        let events = self.history(owner)?;
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let opened = self.open(owner)?;
        let records =
            opened
                .index
                .history_records(&self.engine, &self.namespace(owner), &events)?;
        Ok(records.into_iter().zip(events).collect())
    }

    /// Mem0's log of memory changes for `owner` (empty before the first dialog).
    pub fn history(&self, owner: &Owner) -> Result<Vec<HistoryEvent>, McpError> {
        let no_history = || {
            McpError::Config(format!(
                "{} keeps no history (start the server with --memory-system mem0)",
                self.system()
            ))
        };
        if self.system() != "mem0" {
            return Err(no_history());
        }
        if !self.exists(&self.namespace(owner)) {
            return Ok(Vec::new());
        }
        self.open(owner)?.system.history(0)?.ok_or_else(no_history)
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
            .namespaces_under(&own)
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
