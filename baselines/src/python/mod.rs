//! Memory systems written in Python, run by the harness: `--baseline py:module.path:ClassName`.
//!
//! The class has upstream's agent and solver interface (`py/memorybench/host.py` says which
//! methods, and docs/memory-systems.md shows a complete system). It runs in a host process
//! of its own, one per memory, spoken to in JSON lines ([`host`]); its calls for the answer
//! model, the memory model and the embedder come back here and run through the harness's
//! model layer (record and replay, accounting, `--llm`), charged to the case that caused them.
//!
//! **State.** The system keeps its files in a folder of the engine's directory
//! (`python/<namespace>`), and the engine records which folder a namespace's memory is in: a
//! namespace copied from another (the memory a corpus dataset is answered on) finds the other's
//! folder named and copies it before the host starts, and a folder no namespace names (left
//! by a dropped memory) is emptied. After every memorized dialog or corpus the host saves
//! (`save_memories`), so an acknowledged memorization is on disk when the harness goes on.
//!
//! **Timing.** A reply says how long the host worked and how long it waited for the harness's
//! model calls; the memory's share of an answer is the round trip less the model calls' time,
//! measured here, so the protocol's own cost counts as memory work, never as prediction.

mod host;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use async_trait::async_trait;
use mb_core::{Lang, Message};
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_llm::ops::Answer;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use self::host::{reply_result, Host, HostFailure, Incoming, Launch, MODEL_FAILURE};
use crate::embedding::embed_texts;
use crate::error::MemoryError;
use crate::settings::OwnSettings;
use crate::store::ensure_namespace;
use crate::system::{
    AnswerTiming, Answered, CorpusMemory, CorpusUnit, MemoryContext, MemoryStats, MemorySystem,
    Retrieved, TrainingDialog,
};

/// Engine state naming the folder a namespace's Python memory is in.
const FOLDER_KEY: &str = "python_memory_folder";
/// Engine state counting the memory model's calls made while memorizing.
const OPERATIONS_KEY: &str = "python_memory_operations";

/// A Python system's own settings (beside `retrieve_k` in its `--memory-config` file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PythonSettings {
    /// The interpreter it runs in: a name on `PATH` or a path (a venv's `bin/python`).
    pub interpreter: String,
    /// Folders put first on its import path (`PYTHONPATH`), relative to the working directory.
    pub path: Vec<PathBuf>,
    /// Handed to its constructor as `config`.
    pub config: Map<String, Value>,
}

impl Default for PythonSettings {
    fn default() -> Self {
        PythonSettings {
            interpreter: "python3".into(),
            path: Vec::new(),
            config: Map::new(),
        }
    }
}

impl OwnSettings for PythonSettings {
    fn check(&self) -> Result<(), String> {
        if self.interpreter.trim().is_empty() {
            return Err("interpreter: empty".into());
        }
        Ok(())
    }
}

/// A memory system written in Python, in its host process.
pub struct PythonSystem {
    context: MemoryContext,
    host: Host,
    folder: PathBuf,
    retries: bool,
    stats: Mutex<MemoryStats>,
    /// The error of the model call that made the last request fail, returned in its place so
    /// the harness tells a model failure (retry with fewer memories) from the system's own.
    call_error: Mutex<Option<mb_llm::LlmError>>,
}

impl PythonSystem {
    /// Starts `target` (`module.path:ClassName`) on the context's namespace.
    pub fn open(target: &str, context: MemoryContext) -> Result<PythonSystem, MemoryError> {
        ensure_namespace(&context, &context.namespace)?;
        let settings = context.settings.own::<PythonSettings>()?;
        let folder = memory_folder(&context)?;
        let mut config = settings.config.clone();
        config
            .entry("retrieve_k")
            .or_insert_with(|| json!(context.settings.retrieve_k()));
        if let Some(embedder) = &context.embedder {
            config
                .entry("embedding_dim")
                .or_insert_with(|| json!(embedder.dim()));
        }
        let launch = Launch {
            interpreter: &settings.interpreter,
            path: &settings.path,
            target,
        };
        let open = json!({"dir": folder, "config": config});
        let (host, opened) = Host::start(&launch, open)?;
        let operations: u64 = context
            .engine
            .get_state(&context.namespace, OPERATIONS_KEY)?
            .unwrap_or(0);
        let system = PythonSystem {
            retries: opened
                .get("retries_with_fewer_memories")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            context,
            host,
            folder,
            stats: Mutex::new(MemoryStats {
                llm_operations: operations,
                ..MemoryStats::default()
            }),
            call_error: Mutex::new(None),
        };
        Ok(system)
    }

    /// Sends `op` and serves its model calls until the reply; returns the result and the
    /// seconds the calls took.
    async fn request(
        &self,
        op: &str,
        fields: Value,
        lang: Lang,
    ) -> Result<(Map<String, Value>, f64), MemoryError> {
        let (_, mut incoming) = self.host.send(op, fields)?;
        let mut model_seconds = 0.0;
        while let Some(message) = incoming.recv().await {
            match message {
                Incoming::Call(call) => {
                    let started = Instant::now();
                    let answer = self.serve_call(&call, lang).await;
                    model_seconds += started.elapsed().as_secs_f64();
                    self.host.write(&answer)?;
                }
                Incoming::Reply(reply) => {
                    self.note_stats(&reply);
                    return match reply_result(&reply) {
                        Ok(result) => Ok((result, model_seconds)),
                        Err(why) => Err(self.failure(op, &why)),
                    };
                }
                Incoming::Gone(why) => return Err(self.host.broken(&why)),
            }
        }
        Err(self.host.broken("it stopped answering"))
    }

    /// The harness's answer to one of the host's calls.
    async fn serve_call(&self, call: &Map<String, Value>, lang: Lang) -> Value {
        let id = call.get("call").cloned().unwrap_or(Value::Null);
        let outcome = match call.get("kind").and_then(Value::as_str) {
            Some("chat") => self.chat(call, lang).await.map(|c| json!({"content": c})),
            Some("embed") => self.embed(call).await.map(|v| json!({"vectors": v})),
            other => Err(MemoryError::Config(format!("unknown call kind {other:?}"))),
        };
        match outcome {
            Ok(Value::Object(mut fields)) => {
                fields.insert("call".into(), id);
                fields.insert("ok".into(), Value::Bool(true));
                Value::Object(fields)
            }
            Ok(_) => json!({"call": id, "ok": false, "error": {"message": "no result"}}),
            Err(error) => {
                let message = error.to_string();
                if let MemoryError::Llm(error) = error {
                    if let Ok(mut slot) = self.call_error.lock() {
                        *slot = Some(error);
                    }
                }
                json!({"call": id, "ok": false, "error": {"message": message}})
            }
        }
    }

    async fn chat(&self, call: &Map<String, Value>, lang: Lang) -> Result<String, MemoryError> {
        let messages: Vec<Message> = serde_json::from_value(call["messages"].clone())
            .map_err(|e| MemoryError::Config(format!("a chat call's messages: {e}")))?;
        let mut operation = Answer::new(messages);
        if let Some(evidence) = call.get("evidence") {
            let question = evidence["question"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            operation = operation.with_evidence(question, strings(&evidence["retrieved"]));
        }
        let llm = &self.context.llm;
        match call.get("role").and_then(Value::as_str) {
            Some("memory") => {
                if let Ok(mut stats) = self.stats.lock() {
                    stats.llm_operations += 1;
                }
                Ok(llm.memory.run(&operation, lang).await?)
            }
            _ => Ok(llm.answer.run(&operation, lang).await?),
        }
    }

    async fn embed(&self, call: &Map<String, Value>) -> Result<Vec<Vec<f32>>, MemoryError> {
        let embedder = self.context.embedder.as_ref().ok_or_else(|| {
            MemoryError::Config(
                "this run has no embedder (set `embedder` in the system's settings)".into(),
            )
        })?;
        let texts: Vec<String> = serde_json::from_value(call["texts"].clone())
            .map_err(|e| MemoryError::Config(format!("an embed call's texts: {e}")))?;
        embed_texts(embedder, texts).await
    }

    /// A failed request as an error: the model call's own error when one made it fail.
    fn failure(&self, op: &str, why: &HostFailure) -> MemoryError {
        if let Some(error) = self.call_error.lock().ok().and_then(|mut slot| slot.take()) {
            if why.kind == MODEL_FAILURE {
                return MemoryError::Llm(error);
            }
        }
        self.host.broken(&format!("{op} failed: {why}"))
    }

    fn note_stats(&self, reply: &Map<String, Value>) {
        let stats = &reply["stats"];
        if let Ok(mut kept) = self.stats.lock() {
            kept.items = stats["items"].as_u64().unwrap_or(kept.items);
            kept.text_bytes = stats["text_bytes"].as_u64().unwrap_or(kept.text_bytes);
        }
    }

    /// Saves the memory after a memorization, and the memory model's call count with it.
    async fn save(&self, lang: Lang) -> Result<(), MemoryError> {
        self.request("save", json!({"dir": self.folder}), lang)
            .await?;
        let operations = self.stats()?.llm_operations;
        self.context
            .engine
            .put_state(&self.context.namespace, OPERATIONS_KEY, &operations)?;
        Ok(())
    }
}

#[async_trait]
impl MemorySystem for PythonSystem {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let messages: Vec<Value> = dialog
            .messages
            .iter()
            .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
            .collect();
        let fields =
            json!({"test_idx": dialog.test_idx, "dataset": dialog.dataset, "messages": messages});
        self.request("memorize_dialog", fields, dialog.lang).await?;
        self.save(dialog.lang).await
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        let format_name = match format {
            CorpusFormat::Locomo => "locomo",
            CorpusFormat::DialSim => "dialsim",
        };
        let fields = json!({
            "format": format_name,
            "conversation": corpus.to_locomo_value(),
            "session_cnt": corpus.sessions.len(),
        });
        let (result, _) = self
            .request("memorize_corpus", fields, self.context.lang)
            .await?;
        self.save(self.context.lang).await?;
        let units = result
            .get("units")
            .and_then(Value::as_array)
            .map(|units| {
                units
                    .iter()
                    .map(|u| CorpusUnit {
                        doc_id: u["doc_id"].as_str().unwrap_or_default().to_string(),
                        turns: strings(&u["turns"]),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(CorpusMemory {
            namespace: self.context.namespace.clone(),
            units,
        })
    }

    async fn retrieve(
        &self,
        query: &str,
        lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        let fields = json!({"query": query, "lang": lang_code(lang), "k": k});
        let (result, _) = self.request("retrieve", fields, lang).await?;
        Ok(retrieved(&result["retrieved"]))
    }

    fn delete_corpus(&self, corpus: &CorpusMemory) -> Result<(), MemoryError> {
        self.host
            .send_and_forget("delete_corpus", json!({"doc_ids": corpus.doc_ids()}))
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        self.stats
            .lock()
            .map(|s| *s)
            .map_err(|_| self.host.broken("its statistics are poisoned"))
    }

    fn retries_with_fewer_memories(&self) -> bool {
        self.retries
    }

    async fn answer(
        &self,
        messages: &[Message],
        lang: Lang,
        k: usize,
    ) -> Result<Answered, MemoryError> {
        let started = Instant::now();
        let fields = json!({"messages": messages, "lang": lang_code(lang), "k": k});
        let (result, model_seconds) = self.request("answer", fields, lang).await?;
        let total = started.elapsed().as_secs_f64();
        let prompt: Vec<Message> = serde_json::from_value(result["messages"].clone())
            .unwrap_or_else(|_| messages.to_vec());
        Ok(Answered {
            messages: prompt,
            response: result["response"].as_str().unwrap_or_default().to_string(),
            retrieved: retrieved(&result["retrieved"]),
            timing: AnswerTiming {
                memory_seconds: (total - model_seconds).max(0.0),
                llm_seconds: model_seconds,
            },
        })
    }
}

/// The folder the namespace's memory is in, made ready: its own (emptied when no memory names
/// it), or a copy of the folder of the namespace it was copied from.
fn memory_folder(context: &MemoryContext) -> Result<PathBuf, MemoryError> {
    let namespace = &context.namespace;
    let own = context
        .engine
        .path()
        .join("python")
        .join(folder_name(namespace));
    let recorded: Option<PathBuf> = context.engine.get_state(namespace, FOLDER_KEY)?;
    let io = |what: &str, path: &Path, e: std::io::Error| {
        MemoryError::Config(format!("python memory {what} {}: {e}", path.display()))
    };
    match recorded {
        Some(folder) if folder == own => {}
        Some(source) => {
            remove_if_present(&own).map_err(|e| io("folder", &own, e))?;
            copy_folder(&source, &own).map_err(|e| io("copy of", &source, e))?;
        }
        None => remove_if_present(&own).map_err(|e| io("folder", &own, e))?,
    }
    std::fs::create_dir_all(&own).map_err(|e| io("folder", &own, e))?;
    context.engine.put_state(namespace, FOLDER_KEY, &own)?;
    Ok(own)
}

/// A folder name for a namespace: its letters and digits, and a hash of the whole name so
/// that names differing only in other characters stay apart.
fn folder_name(namespace: &str) -> String {
    let readable: String = namespace
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(80)
        .collect();
    // FNV-1a, stable across builds and platforms.
    let hash = namespace.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{readable}-{hash:016x}")
}

fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn copy_folder(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_folder(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn retrieved(items: &Value) -> Vec<Retrieved> {
    items
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| Retrieved {
                    doc_id: item["doc_id"].as_str().unwrap_or_default().to_string(),
                    score: item["score"].as_f64().unwrap_or(0.0) as f32,
                    text: item["text"].as_str().unwrap_or_default().to_string(),
                    turns: strings(&item["turns"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn lang_code(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "en",
        Lang::Zh => "zh",
    }
}
