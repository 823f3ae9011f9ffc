//! Ingest that never blocks: `add_memory` stores the dialog as one record of the tenant's
//! queue namespace (a synced RocksDB write, so it survives `kill -9` and power loss once
//! acknowledged) and returns; the record's text is indexed at once, so the raw dialog is
//! searchable immediately. Background workers ([`MemoryService::start_workers`]) memorize
//! queued dialogs through the memory system (its LLM work included), a bounded number at once,
//! tenants in turn, each owner's dialogs in order, with retries.
//!
//! Exactly once: a job's dialog number is its queue record id, so the system's units of it
//! have ids `conv_{id}_…`. After memorizing, the worker marks the job applied in the owner's
//! namespace, deletes the queue record, then the mark. A job found in the queue at start is
//! skipped when its mark or its units are in the store (it was applied before a crash) and
//! memorized otherwise; the systems write a dialog's memories in one atomic batch, so a crash
//! leaves all or none of them.

use std::sync::Arc;
use std::time::Duration;

use mb_baselines::curation::{Metadata, MetadataFilter};
use mb_baselines::{MemoryError, TrainingDialog};
use mb_core::{Lang, Message};
use mb_engine::{Filter, Hit, NamespaceOptions, NewRecord, RecordId};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::error::McpError;
use crate::limits;
use crate::memory::queue::{Job, Outcome};
use crate::memory::service::MemoryService;
use crate::memory::Owner;
use crate::tenant::Tenant;

/// Attempts of a job before it is left in the queue as failed.
pub const MAX_ATTEMPTS: u32 = 5;
/// How often a job that met a full disk tries again (an attempt not counted: the engine
/// resumes writes by itself once space is free, checking every 5 s).
const FULL_DISK_RETRY: Duration = Duration::from_secs(2);
/// Attribute of a queue record naming the owner's namespace.
const OWNER: &str = "owner";
/// Attribute of a queue record that failed for good, with the last error.
const FAILED: &str = "failed";

/// A queued dialog as its record's body holds it.
#[derive(Debug, Serialize, Deserialize)]
struct JobBody {
    user_id: String,
    agent_id: Option<String>,
    messages: Vec<Message>,
    /// What every memory made of the dialog carries (checked when queued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<Map<String, Value>>,
}

impl JobBody {
    fn metadata(&self) -> Result<Option<Metadata>, MemoryError> {
        self.metadata
            .clone()
            .map(|m| Metadata::new(Value::Object(m), "metadata"))
            .transpose()
    }
}

fn applied_key(id: u64) -> String {
    format!("mcp/applied/{id:020}")
}

fn transcript(messages: &[Message]) -> String {
    messages
        .iter()
        .map(|m| {
            let role = match m.role {
                mb_core::Role::User => "user",
                mb_core::Role::Assistant => "assistant",
                mb_core::Role::System => "system",
            };
            format!("{role}: {}", m.content)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A queued dialog, as `add_memory` answers it.
#[derive(Debug)]
pub struct Enqueued {
    /// The job's id.
    pub job_id: u64,
    /// Jobs of the tenant waiting, this one included.
    pub queue_depth: usize,
    /// With `wait`: where the outcome arrives.
    pub outcome: Option<oneshot::Receiver<Outcome>>,
}

impl MemoryService {
    /// Queues a dialog of `owner` durably, with the metadata its memories will carry, and
    /// returns at once (see the module documentation).
    pub fn enqueue(
        &self,
        owner: &Owner,
        messages: Vec<Message>,
        metadata: Option<&Metadata>,
        wait: bool,
    ) -> Result<Enqueued, McpError> {
        // Held until the dialog is queued: a deletion of the user waits for it.
        let _pass = self.gate.enter_add(&self.namespace(&Owner {
            agent_id: None,
            ..owner.clone()
        }))?;
        let tenant = owner.tenant.name();
        let prefix = self.tenant_prefix(&owner.tenant);
        let (queued, _, _) = self.scheduler.depth(tenant, &prefix);
        if queued >= limits::MAX_QUEUED_PER_TENANT {
            return Err(McpError::Busy(format!(
                "{queued} dialogs are waiting to be memorized for this tenant (at most {}); \
                 retry later",
                limits::MAX_QUEUED_PER_TENANT
            )));
        }
        let queue = owner.tenant.queue_namespace();
        if !self.exists(&queue) {
            self.engine
                .ensure_namespace(&queue, NamespaceOptions::default())?;
        }
        let namespace = self.namespace(owner);
        let body = JobBody {
            user_id: owner.user_id.clone(),
            agent_id: owner.agent_id.clone(),
            messages,
            metadata: metadata.map(|m| m.fields().clone()),
        };
        let text = transcript(&body.messages);
        let body = serde_json::to_string(&body).map_err(|e| McpError::Io(e.to_string()))?;
        let id = self.engine.put(
            &queue,
            NewRecord::new(text)
                .with_body(body)
                .with_attribute(OWNER, namespace.clone()),
        )?;
        let outcome = self.scheduler.push(
            Job {
                id: id.0,
                owner: owner.clone(),
                namespace,
                attempts: 0,
                maybe_applied: false,
            },
            wait,
        );
        Ok(Enqueued {
            job_id: id.0,
            queue_depth: queued + 1,
            outcome,
        })
    }

    /// The queued (not yet memorized) dialogs of `owner` that match `query` and whose metadata
    /// match `metadata` (all of them without it), best first.
    pub fn search_queued(
        &self,
        owner: &Owner,
        query: &str,
        k: usize,
        metadata: Option<&MetadataFilter>,
    ) -> Result<Vec<Hit>, McpError> {
        let queue = owner.tenant.queue_namespace();
        if !self.exists(&queue) {
            return Ok(Vec::new());
        }
        let filter = Filter::new().attribute(OWNER, self.namespace(owner));
        let Some(metadata) = metadata else {
            return Ok(self
                .engine
                .search_text_filtered(&queue, query, k, &filter)?);
        };
        // Queued dialogs are few (a bounded queue per tenant): all are ranked, then filtered.
        let mut hits = self.engine.search_text_filtered(
            &queue,
            query,
            limits::MAX_QUEUED_PER_TENANT,
            &filter,
        )?;
        hits.retain(|hit| {
            serde_json::from_str::<JobBody>(hit.record.content())
                .is_ok_and(|body| metadata.matches(&body.metadata.unwrap_or_default()))
        });
        hits.truncate(k);
        Ok(hits)
    }

    /// Puts every job found in the durable queues into the schedule (at start).
    pub fn recover_queue(&self) -> Result<usize, McpError> {
        let mut recovered = 0;
        for info in self.engine.namespaces() {
            let Some(tenant) = Tenant::of_queue_namespace(&info.name) else {
                continue;
            };
            for record in self.engine.records(&info.name)? {
                let record = record?;
                let Ok(body) = serde_json::from_str::<JobBody>(record.content()) else {
                    tracing::warn!(
                        "queue record {} of {} is unreadable",
                        record.id.0,
                        info.name
                    );
                    continue;
                };
                let owner = Owner {
                    tenant: tenant.clone(),
                    user_id: body.user_id,
                    agent_id: body.agent_id,
                };
                let namespace = self.namespace(&owner);
                self.scheduler.push(
                    Job {
                        id: record.id.0,
                        owner,
                        namespace,
                        attempts: 0,
                        maybe_applied: true,
                    },
                    false,
                );
                recovered += 1;
            }
        }
        Ok(recovered)
    }

    /// Deletes the queue records of `tenant` whose owner namespace `matches`; returns how many.
    pub(crate) fn delete_queued(
        &self,
        tenant: &Tenant,
        matches: &impl Fn(&str) -> bool,
    ) -> Result<usize, McpError> {
        let queue = tenant.queue_namespace();
        if !self.exists(&queue) {
            return Ok(0);
        }
        let mut batch = mb_engine::Batch::new();
        for record in self.engine.records(&queue)? {
            let record = record?;
            if record.attribute(OWNER).is_some_and(matches) {
                batch.delete(record.id);
            }
        }
        let count = batch.len();
        if count > 0 {
            self.engine.write(&queue, batch)?;
        }
        Ok(count)
    }

    /// Starts the background workers; they run until [`MemoryService::stop_workers`].
    pub fn start_workers(self: &Arc<Self>) -> Vec<tokio::task::JoinHandle<()>> {
        (0..self.workers)
            .map(|_| {
                let service = self.clone();
                tokio::spawn(async move { service.work().await })
            })
            .collect()
    }

    /// Lets running jobs finish and stops handing out new ones (they stay queued on disk).
    pub fn stop_workers(&self) {
        self.scheduler.stop();
    }

    async fn work(&self) {
        loop {
            let Some(mut job) = self.scheduler.take() else {
                if self.scheduler.wait_for_work().await {
                    continue;
                }
                return;
            };
            match self.apply(&job).await {
                Ok(added) => self.scheduler.finish(&job, Ok(added)),
                Err(e) if e.is_storage_full() => {
                    tracing::warn!("memorizing job {} waits for disk space: {e}", job.id);
                    job.maybe_applied = true;
                    tokio::time::sleep(FULL_DISK_RETRY).await;
                    self.scheduler.retry(job);
                }
                Err(e) if job.attempts + 1 < MAX_ATTEMPTS => {
                    job.attempts += 1;
                    job.maybe_applied = true;
                    let wait = Duration::from_millis(200 << job.attempts.min(6));
                    tracing::warn!(
                        "memorizing job {} failed (attempt {}): {e}; retrying in {wait:?}",
                        job.id,
                        job.attempts
                    );
                    tokio::time::sleep(wait).await;
                    self.scheduler.retry(job);
                }
                Err(e) => {
                    tracing::error!("memorizing job {} failed for good: {e}", job.id);
                    if let Err(mark) = self.mark_failed(&job, &e) {
                        tracing::error!("marking job {} failed: {mark}", job.id);
                    }
                    self.scheduler.finish(&job, Err(e.to_string()));
                }
            }
        }
    }

    fn mark_failed(&self, job: &Job, error: &McpError) -> Result<(), McpError> {
        let queue = job.owner.tenant.queue_namespace();
        if let Some(record) = self.engine.get(&queue, RecordId(job.id))? {
            let mut new = NewRecord::new(record.text.clone())
                .with_created_at_ms(record.created_at_ms)
                .with_attribute(FAILED, error.to_string());
            new.body = record.body.clone();
            new.attributes = record.attributes.clone();
            new.attributes.insert(FAILED.into(), error.to_string());
            self.engine.update(&queue, record.id, new)?;
        }
        Ok(())
    }

    /// Memorizes one queued dialog exactly once; returns the memories it added.
    async fn apply(&self, job: &Job) -> Result<Vec<mb_engine::Record>, McpError> {
        let queue = job.owner.tenant.queue_namespace();
        let lock = self.lock_of(&job.namespace);
        let _write = lock.lock().await;
        let Some(record) = self.engine.get(&queue, RecordId(job.id))? else {
            // Deleted meanwhile (the user was deleted): nothing to do.
            return Ok(Vec::new());
        };
        let body: JobBody = serde_json::from_str(record.content())
            .map_err(|e| McpError::Io(format!("queue record {}: {e}", job.id)))?;
        let opened = self.open(&job.owner)?;
        let namespace = &job.namespace;
        let waited = self.scheduler.has_waiter(job.id);
        if waited {
            self.refresh_index(&job.owner)?;
        }
        if !self.already_applied(namespace, job)? {
            let metadata = body.metadata()?;
            let dialog = TrainingDialog {
                test_idx: job.id,
                dataset: "mcp",
                lang: Lang::En,
                messages: &body.messages,
                metadata: metadata.as_ref(),
            };
            opened.system.memorize_dialog(dialog).await?;
            self.engine
                .put_state(namespace, &applied_key(job.id), &true)?;
        }
        self.engine.delete(&queue, RecordId(job.id))?;
        self.engine.delete_state(namespace, &applied_key(job.id))?;
        if waited {
            return self.refresh_index(&job.owner);
        }
        Ok(Vec::new())
    }

    fn already_applied(&self, namespace: &str, job: &Job) -> Result<bool, McpError> {
        if !self.exists(namespace) {
            return Ok(false);
        }
        if self
            .engine
            .get_state::<bool>(namespace, &applied_key(job.id))?
            .is_some()
        {
            return Ok(true);
        }
        if !job.maybe_applied {
            return Ok(false);
        }
        // Applied, but a crash or a failed write came before the mark: the dialog's units are
        // there. They were written after the job was queued, so after its record id.
        let whole = format!("conv_{}", job.id);
        let unit = format!("conv_{}_", job.id);
        for record in self.engine.records_after(namespace, RecordId(job.id))? {
            let record = record?;
            if record
                .attribute("doc_id")
                .is_some_and(|d| d == whole || d.starts_with(&unit))
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::service::MemoryConfig;
    use mb_engine::{Engine, EngineOptions};

    fn service(engine: &Arc<Engine>) -> Arc<MemoryService> {
        let config = MemoryConfig {
            system: "bm25_message".into(),
            embedder: None,
            llm: "offline".into(),
            workers: 2,
        };
        Arc::new(MemoryService::new(engine.clone(), &config).unwrap())
    }

    fn message(text: &str) -> Vec<Message> {
        vec![Message::user(text)]
    }

    async fn drained(engine: &Engine, queue: &str) {
        for _ in 0..500 {
            if engine.count(queue).unwrap() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the queue did not drain");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dialog_memorized_just_before_a_crash_is_not_memorized_again() {
        let dir = tempfile::tempdir().unwrap();
        let engine =
            Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
        let first = service(&engine);
        let owner = Owner {
            tenant: Tenant::local(),
            user_id: "u".into(),
            agent_id: None,
        };
        let namespace = first.namespace(&owner);
        let queue = owner.tenant.queue_namespace();
        let applied = first
            .enqueue(&owner, message("I keep bees"), None, false)
            .unwrap();
        let pending = first
            .enqueue(&owner, message("I sail"), None, false)
            .unwrap();
        // The crash: the first dialog memorized, neither marked nor dequeued; the second not
        // memorized at all.
        let opened = first.open(&owner).unwrap();
        let dialog = message("I keep bees");
        opened
            .system
            .memorize_dialog(TrainingDialog {
                test_idx: applied.job_id,
                dataset: "mcp",
                lang: Lang::En,
                messages: &dialog,
                metadata: None,
            })
            .await
            .unwrap();
        let after_first = engine.count(&namespace).unwrap();
        assert!(after_first > 0);
        drop((opened, first));

        let second = service(&engine);
        assert_eq!(second.recover_queue().unwrap(), 2);
        let workers = second.start_workers();
        drained(&engine, &queue).await;
        second.stop_workers();
        for worker in workers {
            worker.await.unwrap();
        }
        let texts: Vec<String> = engine
            .records(&namespace)
            .unwrap()
            .map(|r| r.unwrap().text)
            .collect();
        assert_eq!(
            texts.iter().filter(|t| t.contains("bees")).count(),
            1,
            "{texts:?}"
        );
        assert_eq!(
            texts.iter().filter(|t| t.contains("sail")).count(),
            1,
            "{texts:?}"
        );
        assert!(pending.job_id > applied.job_id);
    }
}
