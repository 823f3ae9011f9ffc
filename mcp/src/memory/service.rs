//! A memory system of the registry serving many tenants and users: one engine namespace per
//! (tenant, user) and per (tenant, user, agent), opened on first use and kept open. Dialogs
//! are queued durably and memorized by background workers ([`crate::memory::ingest`]);
//! reading, listing, editing and deleting work on the engine records the system wrote.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use mb_baselines::curation::{self, Found, MetadataFilter, RecordIndex};
use mb_baselines::{MemoryContext, MemorySystem, Overrides, SystemSettings, SystemSpec};
use mb_core::Lang;
use mb_embed::{Assets, Embedder, HashingEmbedder, OnnxConfig, OnnxEmbedder};
use mb_engine::{Engine, Record, RecordId};
use mb_llm::{CacheMode, LlmChoice, LlmStack, LocalServer};

use crate::error::McpError;
use crate::memory::gate::UserGate;
use crate::memory::ids::MemoryIds;
use crate::memory::queue::Scheduler;
use crate::memory::Owner;

use crate::tenant::Tenant;

/// Most namespaces kept open (each with its system and record index); past it they are
/// closed, and opened again (the index rebuilt from the store) when used.
const MAX_OPEN_NAMESPACES: usize = 1_000;

/// How the memory tools are set up.
#[derive(Debug, Clone)]
pub struct MemoryConfig {
    /// Registry name of the system (`hybrid`, `bm25_message`, `mem0`, ...).
    pub system: String,
    /// Embedder for systems that embed: `onnx`, `hashing`; `None` uses the system's settings.
    pub embedder: Option<String>,
    /// Model backend: `offline`, `local` or a role-settings file.
    pub llm: String,
    /// Background workers memorizing queued dialogs.
    pub workers: usize,
}

/// One owner's open memory: the system, and its records by the system's unit ids (for naming
/// the record of each search result and history event).
pub(crate) struct Opened {
    pub(crate) system: Box<dyn MemorySystem>,
    pub(crate) index: RecordIndex,
}

/// The memory tools' backend.
pub struct MemoryService {
    pub(crate) engine: Arc<Engine>,
    /// Each tenant's ids for its records ([`crate::memory::ids`]), by tenant name.
    ids: Mutex<HashMap<String, MemoryIds>>,
    spec: &'static SystemSpec,
    settings: SystemSettings,
    llm: Arc<LlmStack>,
    _server: Option<LocalServer>,
    embedder_choice: String,
    embedder: OnceLock<Result<Arc<dyn Embedder>, String>>,
    opened: Mutex<HashMap<String, Arc<Opened>>>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    pub(crate) scheduler: Scheduler,
    pub(crate) gate: UserGate,
    pub(crate) workers: usize,
}

impl MemoryService {
    /// Sets up `config`'s system on `engine`; the embedder is opened at first use, so the
    /// knowledge-graph tools work without one.
    pub fn new(engine: Arc<Engine>, config: &MemoryConfig) -> Result<MemoryService, McpError> {
        let spec = mb_baselines::registry::get(&config.system)?;
        let settings = spec.run_settings(
            None,
            &Overrides {
                retrieve_k: None,
                embedder: config.embedder.clone(),
            },
        )?;
        let choice = LlmChoice {
            llm: config.llm.clone(),
            cache: CacheMode::Off,
        };
        let model = |e: mb_llm::LlmError| McpError::Config(format!("--llm {}: {e}", config.llm));
        let (llm_settings, server) = choice.start().map_err(model)?;
        let llm = LlmStack::build(&llm_settings, CacheMode::Off, None).map_err(model)?;
        let embedder_choice = settings.embedder().to_string();
        Ok(MemoryService {
            ids: Mutex::new(HashMap::new()),
            engine,
            spec,
            settings,
            llm: Arc::new(llm),
            _server: server,
            embedder_choice,
            embedder: OnceLock::new(),
            opened: Mutex::new(HashMap::new()),
            locks: Mutex::new(HashMap::new()),
            scheduler: Scheduler::default(),
            gate: UserGate::default(),
            workers: config.workers.max(1),
        })
    }

    /// The registry name of the system.
    pub fn system(&self) -> &'static str {
        self.spec.name
    }

    /// How many memories a search returns when not told.
    pub fn retrieve_k(&self) -> usize {
        self.settings.retrieve_k()
    }

    /// The prefix of every memory namespace of `tenant` under this system (with a final `/`).
    pub fn tenant_prefix(&self, tenant: &Tenant) -> String {
        format!("{}/{}/", tenant.memory_root(), self.spec.name)
    }

    /// The ids the tools show for `tenant`'s records.
    pub fn ids(&self, tenant: &Tenant) -> Result<MemoryIds, McpError> {
        let mut ids = self
            .ids
            .lock()
            .map_err(|_| McpError::Io("the memory id table lock is poisoned".into()))?;
        if let Some(kept) = ids.get(tenant.name()) {
            return Ok(kept.clone());
        }
        let opened = MemoryIds::open(&self.engine, &format!("{}/ids", tenant.memory_root()))?;
        ids.insert(tenant.name().to_string(), opened.clone());
        Ok(opened)
    }

    /// The namespace holding `owner`'s memory.
    pub fn namespace(&self, owner: &Owner) -> String {
        let user = format!("{}{}", self.tenant_prefix(&owner.tenant), owner.user_id);
        match &owner.agent_id {
            None => user,
            Some(agent) => format!("{user}/agent/{agent}"),
        }
    }

    fn embedder(&self) -> Result<Option<Arc<dyn Embedder>>, McpError> {
        if !self.spec.needs_embedder {
            return Ok(None);
        }
        // No vector cache shared between tenants: a cache keyed by text would tell one tenant
        // what another embedded (by its speed) and keep vectors of forgotten memories.
        let opened = self
            .embedder
            .get_or_init(|| match self.embedder_choice.as_str() {
                "hashing" => Ok(Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>),
                "onnx" => OnnxEmbedder::open_default()
                    .map(|e| Arc::new(e) as Arc<dyn Embedder>)
                    .map_err(|e| {
                        format!(
                        "the in-process embedder did not open ({e}); run bash scripts/setup.sh, \
                         or pass --embedder hashing or a system without embeddings \
                         (--memory-system bm25_message)"
                    )
                    }),
                // A model directory, or a model's name under the checkout's .cache/models/.
                other => Assets::model_dir(other)
                    .and_then(OnnxConfig::from_dir)
                    .and_then(OnnxEmbedder::new)
                    .map(|e| Arc::new(e) as Arc<dyn Embedder>)
                    .map_err(|e| {
                        format!(
                            "embedder {other:?} did not open ({e}); the MCP server takes onnx, \
                             hashing, or a model directory or name (run bash scripts/setup.sh)"
                        )
                    }),
            });
        match opened {
            Ok(embedder) => Ok(Some(embedder.clone())),
            Err(e) => Err(McpError::Config(e.clone())),
        }
    }

    pub(crate) fn open(&self, owner: &Owner) -> Result<Arc<Opened>, McpError> {
        let namespace = self.namespace(owner);
        let mut opened = self
            .opened
            .lock()
            .map_err(|_| McpError::Io("the memory table lock is poisoned".into()))?;
        if let Some(found) = opened.get(&namespace) {
            return Ok(found.clone());
        }
        if opened.len() >= MAX_OPEN_NAMESPACES {
            opened.clear();
        }
        let context = MemoryContext {
            engine: self.engine.clone(),
            namespace: namespace.clone(),
            llm: self.llm.clone(),
            embedder: self.embedder()?,
            lang: Lang::En,
            settings: self.settings.clone(),
            date: mb_core::clock::utc_date(),
        };
        let entry = Arc::new(Opened {
            system: self.spec.build(context)?,
            index: RecordIndex::default(),
        });
        opened.insert(namespace, entry.clone());
        Ok(entry)
    }

    /// Forgets the opened systems (and their record indexes) of the namespaces `matches`
    /// selects.
    pub(crate) fn close_namespaces(&self, matches: impl Fn(&str) -> bool) {
        if let Ok(mut opened) = self.opened.lock() {
            opened.retain(|ns, _| !matches(ns));
        }
        if let Ok(mut locks) = self.locks.lock() {
            locks.retain(|ns, _| !matches(ns));
        }
    }

    /// The write lock of one namespace: memorizing a dialog and editing a memory of the same
    /// owner never interleave.
    pub(crate) fn lock_of(&self, namespace: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        locks.entry(namespace.to_string()).or_default().clone()
    }

    pub(crate) fn exists(&self, namespace: &str) -> bool {
        self.engine.namespace(namespace).is_ok()
    }

    /// Reads the records of `owner`'s memory written since its index last looked, and
    /// returns them.
    pub(crate) fn refresh_index(&self, owner: &Owner) -> Result<Vec<Record>, McpError> {
        let opened = self.open(owner)?;
        Ok(opened.index.refresh(&self.engine, &self.namespace(owner))?)
    }

    /// The scopes a call about `owner` covers, as mem0's scoping has it: the owner's own memory
    /// and, for a user without an agent named, the memories their agents keep of them.
    pub fn scopes(&self, owner: &Owner) -> Vec<Owner> {
        let mut scopes = vec![owner.clone()];
        if owner.agent_id.is_none() {
            let prefix = format!("{}/agent/", self.namespace(owner));
            // Sorted by name, hence by agent.
            let agents: Vec<String> = self
                .engine
                .namespaces_under(&prefix)
                .into_iter()
                .filter_map(|info| info.name.strip_prefix(&prefix).map(str::to_string))
                .filter(|agent| !agent.is_empty() && !agent.contains('/'))
                .collect();
            scopes.extend(agents.into_iter().map(|agent| Owner {
                agent_id: Some(agent),
                ..owner.clone()
            }));
        }
        scopes
    }

    /// The scope of `owner`'s ([`MemoryService::scopes`]) that holds the memory shown as `id`;
    /// `owner` itself when none does (the caller then finds nothing there).
    pub fn owning(&self, owner: &Owner, id: u64) -> Result<Owner, McpError> {
        let record = self.ids(&owner.tenant)?.record(id);
        for scope in self.scopes(owner) {
            let namespace = self.namespace(&scope);
            if self.exists(&namespace) && self.engine.get(&namespace, record)?.is_some() {
                return Ok(scope);
            }
        }
        Ok(owner.clone())
    }

    /// The `k` memories most relevant to `query` in each of `owner`'s scopes whose metadata
    /// match `filter`, best first by score, each with the agent whose memory it is (`None`:
    /// the user's own).
    pub async fn search(
        &self,
        owner: &Owner,
        query: &str,
        k: usize,
        filter: Option<&MetadataFilter>,
    ) -> Result<Vec<(Option<String>, Found)>, McpError> {
        let mut found = Vec::new();
        for scope in self.scopes(owner) {
            if !self.exists(&self.namespace(&scope)) {
                continue;
            }
            let opened = self.open(&scope)?;
            let hits = curation::search(&*opened.system, &opened.index, query, Lang::En, k, filter)
                .await?;
            found.extend(hits.into_iter().map(|hit| (scope.agent_id.clone(), hit)));
        }
        found.sort_by(|a, b| b.1.retrieved.score.total_cmp(&a.1.retrieved.score));
        found.truncate(k);
        Ok(found)
    }

    /// One record of `owner`'s memory, by the id the tools show.
    pub fn get(&self, owner: &Owner, id: u64) -> Result<Record, McpError> {
        let namespace = self.namespace(owner);
        let missing = || McpError::NotFound(format!("memory {id} not found for this user"));
        if !self.exists(&namespace) {
            return Err(missing());
        }
        self.engine
            .get(&namespace, self.ids(&owner.tenant)?.record(id))?
            .ok_or_else(missing)
    }

    /// One page of `owner`'s memories after the one whose shown id is `after`
    /// ([`curation::page`]).
    pub fn list(
        &self,
        owner: &Owner,
        after: Option<u64>,
        limit: usize,
        filter: Option<&MetadataFilter>,
    ) -> Result<(Vec<Record>, bool), McpError> {
        let namespace = self.namespace(owner);
        if !self.exists(&namespace) {
            return Ok((Vec::new(), false));
        }
        let from = match after {
            Some(shown) => self.ids(&owner.tenant)?.record(shown),
            None => RecordId(0),
        };
        Ok(curation::page(
            &self.engine,
            &namespace,
            from,
            limit,
            filter,
        )?)
    }

    /// Every memory namespace of `tenant` under this system with its record count.
    pub fn namespaces(&self, tenant: &Tenant) -> Result<Vec<(String, u64)>, McpError> {
        let prefix = self.tenant_prefix(tenant);
        let mut found = Vec::new();
        for info in self.engine.namespaces_under(&prefix) {
            let memory = info.name.strip_prefix(&prefix).is_some_and(holds_memories);
            if memory {
                let count = self.engine.count(&info.name)?;
                found.push((info.name, count));
            }
        }
        Ok(found)
    }
}

/// Whether a namespace under a tenant's prefix holds a user's or agent's memories (`user` or
/// `user/agent/agent`; ids hold no `/`) rather than what a system derives from them (the
/// hybrid memory's `user/hybrid-sessions`).
fn holds_memories(rest: &str) -> bool {
    let parts: Vec<&str> = rest.split('/').collect();
    matches!(parts.as_slice(), [_] | [_, "agent", _])
}
