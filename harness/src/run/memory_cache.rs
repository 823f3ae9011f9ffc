//! The off-policy memory cache: the memory of a set's training dialogs is built once in the
//! store and reused by later runs (upstream's `memory_cache` with its `saved.txt`), but only when
//! it was built from the same inputs. Its marker records everything that shapes the memory: the
//! system's settings as it runs with them, the memory model, the embedder, the language, the
//! training dialogs memorized and the cache's format. A memory built from anything else is
//! rebuilt, saying what differs; a stale memory is never reused.

use std::collections::BTreeSet;

use mb_baselines::{MemorySystem, TrainingDialog};
use mb_engine::{Engine, NamespaceOptions};
use mb_llm::ops::OutputHandling;
use mb_llm::{LlmSettings, RoleSettings};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::HarnessError;
use crate::run::cost::MemoryBuilt;

/// Version of the cache: bump when the way a memory is built from the same inputs changes, or
/// the way it is stored (4: MemoryOS stores each page under a key of its own; 5: answering no
/// longer writes to it, so a memory that earlier versions' questions warmed is built again).
const CACHE_FORMAT: u32 = 5;

/// Markers of older formats, removed when their memory is rebuilt.
const LEGACY_KEYS: [&str; 2] = ["memorized-v2", "corpus"];

/// Everything that shapes a memory built from training dialogs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryInputs {
    /// The cache's format (this version's when built by it).
    pub format: u32,
    /// The system's settings as it runs with them (JSON).
    pub settings: Value,
    /// The memory role's provider, model, endpoint and output handling (`not used` for a
    /// system whose memory it never shapes: BM25 and embedding memories).
    pub memory_model: String,
    /// The embedder's model id and dimension, for systems that embed.
    pub embedder: Option<String>,
    /// The language the memory indexes for.
    pub lang: String,
    /// SHA-256 of the training dialogs memorized, in order.
    pub dialogs: String,
}

/// The marker of a built memory: what it was built from and what building it cost.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    inputs: MemoryInputs,
    built: MemoryBuilt,
}

impl MemoryInputs {
    /// The inputs of `system`'s memory of `dialogs`, with the memory role of `llm`.
    pub fn of(
        system: &dyn MemorySystem,
        llm: &LlmSettings,
        dialogs: &[TrainingDialog<'_>],
    ) -> Result<MemoryInputs, HarnessError> {
        let context = system.context();
        let json = |e: serde_json::Error| HarnessError::Usage(format!("memory cache key: {e}"));
        let mut hash = Sha256::new();
        for dialog in dialogs {
            let entry = (
                dialog.dataset,
                dialog.test_idx,
                dialog.lang,
                dialog.messages,
            );
            hash.update(serde_json::to_vec(&entry).map_err(json)?);
            hash.update(b"\n");
        }
        Ok(MemoryInputs {
            format: CACHE_FORMAT,
            settings: serde_json::to_value(&context.settings).map_err(json)?,
            memory_model: if system.builds_with_the_memory_model() {
                memory_model(llm)
            } else {
                "not used".into()
            },
            embedder: context
                .embedder
                .as_ref()
                .map(|e| format!("{} ({} dimensions)", e.model_id(), e.dim())),
            lang: serde_json::to_value(context.lang)
                .map_err(json)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            dialogs: hash.finalize().iter().map(|b| format!("{b:02x}")).collect(),
        })
    }

    /// What differs between these inputs and `built`'s, one phrase per input.
    pub fn differences(&self, built: &MemoryInputs) -> Vec<String> {
        let mut out = Vec::new();
        if built.format != self.format {
            out.push(format!(
                "cache format {} (now {})",
                built.format, self.format
            ));
        }
        for key in changed_keys(&built.settings, &self.settings) {
            out.push(format!(
                "setting {key} = {} (now {})",
                built.settings.get(&key).unwrap_or(&Value::Null),
                self.settings.get(&key).unwrap_or(&Value::Null)
            ));
        }
        let text = |name: &str, was: &str, now: &str| format!("{name} {was} (now {now})");
        if built.memory_model != self.memory_model {
            out.push(text(
                "memory model",
                &built.memory_model,
                &self.memory_model,
            ));
        }
        if built.embedder != self.embedder {
            let name = |e: &Option<String>| e.clone().unwrap_or_else(|| "none".into());
            out.push(text(
                "embedder",
                &name(&built.embedder),
                &name(&self.embedder),
            ));
        }
        if built.lang != self.lang {
            out.push(text("language", &built.lang, &self.lang));
        }
        if built.dialogs != self.dialogs {
            out.push("training dialogs (data changed)".to_string());
        }
        out
    }
}

/// The memory role as it shapes a memory: provider, model, endpoint, output limits (when set)
/// and how unusable output is handled (with its re-asks when tolerant).
fn memory_model(llm: &LlmSettings) -> String {
    let handling = match llm.output_handling {
        OutputHandling::Upstream => "upstream output handling".to_string(),
        OutputHandling::Tolerant => format!("tolerant output handling, {} re-asks", llm.reasks),
    };
    let (provider, endpoint) = match &llm.memory {
        RoleSettings::Offline => return "offline".to_string(),
        RoleSettings::Openai(e) => ("openai", e),
        RoleSettings::Anthropic(e) => ("anthropic", e),
    };
    let mut limits = String::new();
    if let Some(cap) = endpoint.max_tokens {
        limits.push_str(&format!(", max_tokens {cap}"));
    }
    for (operation, cap) in &endpoint.max_tokens_per_operation {
        limits.push_str(&format!(", {operation} max_tokens {cap}"));
    }
    format!(
        "{provider} {} at {}{limits}, {handling}",
        endpoint.model, endpoint.base_url
    )
}

/// Top-level keys whose values differ between two JSON objects.
fn changed_keys(a: &Value, b: &Value) -> Vec<String> {
    let keys = |v: &Value| -> BTreeSet<String> {
        v.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let all: BTreeSet<String> = keys(a).union(&keys(b)).cloned().collect();
    all.into_iter().filter(|k| a.get(k) != b.get(k)).collect()
}

/// The state key of the marker of the memory in `namespace`.
fn marker_key(namespace: &str) -> String {
    format!("memory-cache:{namespace}")
}

/// The memorization of the memory in `namespace` when it was built from `inputs`. A memory
/// built from other inputs, by an older version, or not finished is not reusable: the reason
/// is logged and printed, and `None` returned (the caller rebuilds the memory).
pub fn reusable(
    engine: &Engine,
    namespace: &str,
    inputs: &MemoryInputs,
) -> Result<Option<MemoryBuilt>, HarnessError> {
    let stored: Option<String> = engine.get_state(HARNESS_NAMESPACE, &marker_key(namespace))?;
    let mut legacy = false;
    for prefix in LEGACY_KEYS {
        let key = format!("{prefix}:{namespace}");
        legacy |= engine.state_keys(HARNESS_NAMESPACE, &key)?.contains(&key);
    }
    let reason = match stored.map(|text| serde_json::from_str::<Marker>(&text)) {
        Some(Ok(marker)) => {
            let differences = inputs.differences(&marker.inputs);
            if differences.is_empty() {
                return Ok(Some(marker.built));
            }
            format!("it was built with {}", differences.join(", "))
        }
        Some(Err(e)) => format!("its marker is unreadable ({e})"),
        None if legacy => "it was built by an older version".to_string(),
        // A memory never built (or whose building was interrupted): nothing to report.
        None => return Ok(None),
    };
    tracing::info!("memory {namespace}: {reason}; rebuilding it");
    eprintln!("The memory {namespace} in the store is stale: {reason}. Rebuilding it.");
    Ok(None)
}

/// Marks the memory in `namespace` as built from `inputs` (and forgets older markers).
pub fn mark(
    engine: &Engine,
    namespace: &str,
    inputs: &MemoryInputs,
    built: &MemoryBuilt,
) -> Result<(), HarnessError> {
    let marker = Marker {
        inputs: inputs.clone(),
        built: built.clone(),
    };
    let text = serde_json::to_string(&marker)
        .map_err(|e| HarnessError::Usage(format!("memory cache marker: {e}")))?;
    let mut batch = mb_engine::Batch::new();
    batch.put_state(marker_key(namespace), &text)?;
    for prefix in LEGACY_KEYS {
        batch.delete_state(format!("{prefix}:{namespace}"));
    }
    engine.write(HARNESS_NAMESPACE, batch)?;
    Ok(())
}

/// Forgets the marker of the memory in `namespace` (before it is rebuilt, so that a rebuild
/// cut short is never taken for the memory).
pub fn forget(engine: &Engine, namespace: &str) -> Result<(), HarnessError> {
    engine.delete_state(HARNESS_NAMESPACE, &marker_key(namespace))?;
    Ok(())
}

/// The namespace holding the harness's own bookkeeping (memory completion markers, corpora
/// in memory).
pub const HARNESS_NAMESPACE: &str = "harness";
/// Makes sure the bookkeeping namespace exists.
pub fn ensure_bookkeeping(engine: &Engine) -> Result<(), HarnessError> {
    engine.ensure_namespace(HARNESS_NAMESPACE, NamespaceOptions::default())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> MemoryInputs {
        MemoryInputs {
            format: CACHE_FORMAT,
            settings: serde_json::json!({"retrieve_k": 5, "keep_one_sided": false}),
            memory_model: "offline".into(),
            embedder: Some("hashing-384 (384 dimensions)".into()),
            lang: "en".into(),
            dialogs: "ab".into(),
        }
    }

    #[test]
    fn output_limits_and_handling_are_part_of_the_memory_model() {
        let text = "[memory]\nprovider = \"vllm\"\nbase_url = \"http://h/v1\"\nmodel = \"m\"\n";
        let plain: LlmSettings = toml::from_str(text).unwrap();
        assert_eq!(
            memory_model(&plain),
            "openai m at http://h/v1, upstream output handling"
        );
        let limited: LlmSettings = toml::from_str(&format!(
            "output_handling = \"tolerant\"\n{text}max_tokens = 256\n\
             [memory.max_tokens_per_operation]\nmeta_summary = 128\n"
        ))
        .unwrap();
        assert_eq!(
            memory_model(&limited),
            "openai m at http://h/v1, max_tokens 256, meta_summary max_tokens 128, \
             tolerant output handling, 2 re-asks"
        );
        assert_eq!(memory_model(&LlmSettings::default()), "offline");
    }

    #[test]
    fn differences_name_each_input_that_changed() {
        let built = inputs();
        assert!(inputs().differences(&built).is_empty());
        let mut now = inputs();
        now.settings["keep_one_sided"] = true.into();
        now.memory_model =
            "openai Qwen/Qwen3-8B at http://localhost:12345/v1, upstream output handling".into();
        now.dialogs = "cd".into();
        assert_eq!(
            now.differences(&built),
            [
                "setting keep_one_sided = false (now true)",
                "memory model offline (now openai Qwen/Qwen3-8B at \
                 http://localhost:12345/v1, upstream output handling)",
                "training dialogs (data changed)",
            ]
        );
        let mut older = inputs();
        older.format = 2;
        older.embedder = None;
        assert_eq!(
            inputs().differences(&older),
            [
                format!("cache format 2 (now {CACHE_FORMAT})"),
                "embedder none (now hashing-384 (384 dimensions))".to_string()
            ]
        );
    }
}
