//! A memory system of the registry serving many users: one engine namespace per user (and per
//! user and agent), opened on first use and kept open. Dialogs go through the system's own
//! memorizing (units, embeddings, extracted facts); reading, listing, editing and deleting work
//! on the engine records the system wrote.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use mb_baselines::mem0::{HistoryEvent, Mem0};
use mb_baselines::{
    MemoryContext, MemorySystem, Overrides, Retrieved, SystemSettings, SystemSpec, TrainingDialog,
};
use mb_core::Lang;
use mb_datasets::row::DialogMessage;
use mb_embed::{CachedEmbedder, Embedder, HashingEmbedder, OnnxEmbedder};
use mb_engine::{Engine, NewRecord, Record, RecordId};
use mb_llm::{CacheMode, LlmChoice, LlmStack, LocalServer};

use crate::error::McpError;

/// State key numbering the dialogs added through the server, so each gets its own unit ids.
const NEXT_DIALOG: &str = "mcp/next_dialog";
/// Prefix of every memory namespace the server creates.
pub const NAMESPACE_PREFIX: &str = "mcp/memory";

/// How the memory tools are set up.
#[derive(Debug, Clone)]
pub struct MemoryConfig {
    /// Registry name of the system (`hybrid`, `bm25_message`, `mem0`, ...).
    pub system: String,
    /// Embedder for systems that embed: `onnx`, `hashing`; `None` uses the system's settings.
    pub embedder: Option<String>,
    /// Model backend: `offline`, `local` or a role-settings file.
    pub llm: String,
}

/// Whose memory a call is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    /// The user.
    pub user_id: String,
    /// The agent, when its memory is kept apart from the user's.
    pub agent_id: Option<String>,
}

struct Opened {
    system: Box<dyn MemorySystem>,
    mem0: Option<Mem0>,
}

/// The memory tools' backend.
pub struct MemoryService {
    engine: Arc<Engine>,
    spec: &'static SystemSpec,
    settings: SystemSettings,
    llm: Arc<LlmStack>,
    _server: Option<LocalServer>,
    embedder_choice: String,
    embedder: OnceLock<Result<Arc<dyn Embedder>, String>>,
    opened: Mutex<HashMap<String, Arc<Opened>>>,
    writes: tokio::sync::Mutex<()>,
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
            engine,
            spec,
            settings,
            llm: Arc::new(llm),
            _server: server,
            embedder_choice,
            embedder: OnceLock::new(),
            opened: Mutex::new(HashMap::new()),
            writes: tokio::sync::Mutex::new(()),
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

    /// The namespace holding `owner`'s memory.
    pub fn namespace(&self, owner: &Owner) -> String {
        match &owner.agent_id {
            None => format!("{NAMESPACE_PREFIX}/{}/{}", self.spec.name, owner.user_id),
            Some(agent) => format!(
                "{NAMESPACE_PREFIX}/{}/{}/agent/{agent}",
                self.spec.name, owner.user_id
            ),
        }
    }

    fn embedder(&self) -> Result<Option<Arc<dyn Embedder>>, McpError> {
        if !self.spec.needs_embedder {
            return Ok(None);
        }
        let opened = self.embedder.get_or_init(|| {
            let engine = self.engine.clone();
            match self.embedder_choice.as_str() {
                "hashing" => Ok(Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>),
                "onnx" => OnnxEmbedder::open_default()
                    .and_then(|e| CachedEmbedder::new(e, engine))
                    .map(|e| Arc::new(e) as Arc<dyn Embedder>)
                    .map_err(|e| {
                        format!(
                            "the in-process embedder did not open ({e}); run bash scripts/setup.sh, \
                             or pass --embedder hashing or a system without embeddings \
                             (--memory-system bm25_message)"
                        )
                    }),
                other => Err(format!(
                    "embedder {other:?} is not supported by the MCP server (onnx or hashing)"
                )),
            }
        });
        match opened {
            Ok(embedder) => Ok(Some(embedder.clone())),
            Err(e) => Err(McpError::Config(e.clone())),
        }
    }

    fn open(&self, owner: &Owner) -> Result<Arc<Opened>, McpError> {
        let namespace = self.namespace(owner);
        let mut opened = self
            .opened
            .lock()
            .map_err(|_| McpError::Io("the memory table lock is poisoned".into()))?;
        if let Some(found) = opened.get(&namespace) {
            return Ok(found.clone());
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
        let mem0 = match self.spec.name {
            "mem0" => Some(Mem0::new(context.clone())?),
            _ => None,
        };
        let system = self.spec.build(context)?;
        let entry = Arc::new(Opened { system, mem0 });
        opened.insert(namespace, entry.clone());
        Ok(entry)
    }

    fn exists(&self, namespace: &str) -> bool {
        self.engine.namespaces().iter().any(|n| n.name == namespace)
    }

    /// Memorizes one dialog for `owner`; returns the records it added.
    pub async fn add(
        &self,
        owner: &Owner,
        messages: Vec<DialogMessage>,
    ) -> Result<Vec<Record>, McpError> {
        let opened = self.open(owner)?;
        let _write = self.writes.lock().await;
        let context = opened.system.context();
        let last = self.last_id(&context.namespace)?;
        let number: u64 = self
            .engine
            .get_state(&context.namespace, NEXT_DIALOG)
            .ok()
            .flatten()
            .unwrap_or(0);
        let dialog = TrainingDialog {
            test_idx: number,
            dataset: "mcp",
            lang: context.lang,
            messages: &messages,
        };
        opened.system.memorize_dialog(dialog).await?;
        self.engine
            .put_state(&context.namespace, NEXT_DIALOG, &(number + 1))?;
        let mut added: Vec<Record> = self
            .engine
            .records(&context.namespace)?
            .filter(|r| r.as_ref().map(|r| Some(r.id) > last).unwrap_or(true))
            .collect::<Result<_, _>>()?;
        added.sort_by_key(|r| r.id);
        Ok(added)
    }

    fn last_id(&self, namespace: &str) -> Result<Option<RecordId>, McpError> {
        if !self.exists(namespace) {
            return Ok(None);
        }
        let mut last = None;
        for record in self.engine.records(namespace)? {
            last = last.max(Some(record?.id));
        }
        Ok(last)
    }

    /// The `k` memories of `owner` most relevant to `query`, with the record id of each when
    /// it is found.
    pub async fn search(
        &self,
        owner: &Owner,
        query: &str,
        k: usize,
    ) -> Result<Vec<(Option<RecordId>, Retrieved)>, McpError> {
        let namespace = self.namespace(owner);
        if !self.exists(&namespace) {
            return Ok(Vec::new());
        }
        let opened = self.open(owner)?;
        let found = opened.system.retrieve(query, Lang::En, k).await?;
        let mut ids = HashMap::new();
        for record in self.engine.records(&namespace)? {
            let record = record?;
            if let Some(doc_id) = record.attribute("doc_id") {
                ids.entry(doc_id.to_string()).or_insert(record.id);
            }
        }
        Ok(found
            .into_iter()
            .map(|r| (ids.get(&r.doc_id).copied(), r))
            .collect())
    }

    /// One record of `owner`'s memory.
    pub fn get(&self, owner: &Owner, id: u64) -> Result<Record, McpError> {
        let namespace = self.namespace(owner);
        let missing = || McpError::NotFound(format!("memory {id} not found for this user"));
        if !self.exists(&namespace) {
            return Err(missing());
        }
        self.engine
            .get(&namespace, RecordId(id))?
            .ok_or_else(missing)
    }

    /// Up to `limit` records of `owner` with ids above `after`, in id order, and whether more
    /// follow.
    pub fn list(
        &self,
        owner: &Owner,
        after: Option<u64>,
        limit: usize,
    ) -> Result<(Vec<Record>, bool), McpError> {
        let namespace = self.namespace(owner);
        if !self.exists(&namespace) {
            return Ok((Vec::new(), false));
        }
        let after = after.map(RecordId);
        let mut records: Vec<Record> = self
            .engine
            .records(&namespace)?
            .filter(|r| r.as_ref().map(|r| Some(r.id) > after).unwrap_or(true))
            .collect::<Result<_, _>>()?;
        records.sort_by_key(|r| r.id);
        let more = records.len() > limit;
        records.truncate(limit);
        Ok((records, more))
    }

    /// Replaces the text of one record (re-embedded when the system embeds), keeping its id
    /// and attributes.
    pub async fn update(&self, owner: &Owner, id: u64, text: &str) -> Result<Record, McpError> {
        let old = self.get(owner, id)?;
        let _write = self.writes.lock().await;
        let mut record = NewRecord::new(text).with_created_at_ms(old.created_at_ms);
        record.attributes = old.attributes;
        if let Some(embedder) = self.embedder()? {
            let vector = embedder
                .embed_one(text)
                .map_err(|e| McpError::Config(format!("embedding the new text: {e}")))?;
            record = record.with_vector(embedder.model_id(), vector);
        }
        let namespace = self.namespace(owner);
        self.engine.update(&namespace, RecordId(id), record)?;
        self.get(owner, id)
    }

    /// Deletes one record; false when there was none.
    pub async fn delete(&self, owner: &Owner, id: u64) -> Result<bool, McpError> {
        let namespace = self.namespace(owner);
        if !self.exists(&namespace) {
            return Ok(false);
        }
        let _write = self.writes.lock().await;
        Ok(self.engine.delete(&namespace, RecordId(id))?)
    }

    /// Drops every namespace of `user_id` (theirs and their agents'); returns how many.
    pub async fn delete_user(&self, user_id: &str) -> Result<usize, McpError> {
        let _write = self.writes.lock().await;
        let own = self.namespace(&Owner {
            user_id: user_id.to_string(),
            agent_id: None,
        });
        let agents = format!("{own}/agent/");
        let mut dropped = 0;
        let mut opened = self
            .opened
            .lock()
            .map_err(|_| McpError::Io("the memory table lock is poisoned".into()))?;
        for info in self.engine.namespaces() {
            if info.name == own || info.name.starts_with(&agents) {
                opened.remove(&info.name);
                self.engine.drop_namespace(&info.name)?;
                dropped += 1;
            }
        }
        Ok(dropped)
    }

    /// Mem0's log of memory changes for `owner`.
    pub fn history(&self, owner: &Owner) -> Result<Vec<HistoryEvent>, McpError> {
        let opened = self.open(owner)?;
        match &opened.mem0 {
            Some(mem0) => Ok(mem0.history()?),
            None => Err(McpError::Config(format!(
                "{} keeps no history (start the server with --memory-system mem0)",
                self.spec.name
            ))),
        }
    }

    /// Every memory namespace of this system with its record count.
    pub fn namespaces(&self) -> Result<Vec<(String, u64)>, McpError> {
        let prefix = format!("{NAMESPACE_PREFIX}/{}/", self.spec.name);
        let mut found = Vec::new();
        for info in self.engine.namespaces() {
            if info.name.starts_with(&prefix) {
                let count = self.engine.count(&info.name)?;
                found.push((info.name, count));
            }
        }
        found.sort();
        Ok(found)
    }
}
