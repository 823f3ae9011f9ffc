//! The steps of docs/memory-systems.md "Adding a memory system", followed once: a tiny system
//! (the newest user messages, no search) written against the public API only, given a
//! registry entry and a settings file, then memorizing and answering through the default
//! retrieval-augmented flow.

use async_trait::async_trait;
use mb_baselines::{
    CorpusMemory, MemoryContext, MemoryError, MemoryStats, MemorySystem, Retrieved, SettingsFile,
    SystemSpec, TrainingDialog,
};
use mb_core::{Lang, Message, Role};
use mb_datasets::corpus::Conversation;
use mb_datasets::dataset::CorpusFormat;
use mb_engine::NamespaceOptions;

use crate::common::{context, engine, offline};

/// Step 1, the module: a memory of the newest user messages, kept in the engine's state.
struct RecentMessages {
    context: MemoryContext,
}

/// The state key holding the remembered messages, oldest first.
const MESSAGES: &str = "messages";

impl RecentMessages {
    fn new(context: MemoryContext) -> Result<RecentMessages, MemoryError> {
        context
            .engine
            .ensure_namespace(&context.namespace, NamespaceOptions::default())?;
        Ok(RecentMessages { context })
    }

    fn messages(&self) -> Result<Vec<String>, MemoryError> {
        let stored = self
            .context
            .engine
            .get_state(&self.context.namespace, MESSAGES)?;
        Ok(stored.unwrap_or_default())
    }
}

#[async_trait]
impl MemorySystem for RecentMessages {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let mut messages = self.messages()?;
        messages.extend(
            dialog
                .messages
                .iter()
                .filter(|m| m.role == Role::User)
                .map(|m| m.content.clone()),
        );
        let engine = &self.context.engine;
        engine.put_state(&self.context.namespace, MESSAGES, &messages)?;
        Ok(())
    }

    async fn memorize_corpus(
        &self,
        _corpus: &Conversation,
        _format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        Ok(CorpusMemory {
            namespace: self.context.namespace.clone(),
            units: Vec::new(),
        })
    }

    async fn retrieve(
        &self,
        _query: &str,
        _lang: Lang,
        k: usize,
    ) -> Result<Vec<Retrieved>, MemoryError> {
        let messages = self.messages()?;
        Ok(messages
            .iter()
            .enumerate()
            .rev()
            .take(k)
            .map(|(i, text)| Retrieved {
                doc_id: format!("message_{i}"),
                score: i as f32,
                text: text.clone(),
                turns: Vec::new(),
            })
            .collect())
    }

    fn delete_corpus(&self, _corpus: &CorpusMemory) -> Result<(), MemoryError> {
        Ok(())
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        let messages = self.messages()?;
        Ok(MemoryStats {
            items: messages.len() as u64,
            text_bytes: messages.iter().map(|m| m.len() as u64).sum(),
            llm_operations: 0,
        })
    }
}

/// Step 2, the registry entry (in `registry.rs` it would use `settings_file!("recent.toml")`;
/// step 3, the settings file, is the text below).
static RECENT: SystemSpec = SystemSpec::new(
    "recent_messages",
    "Recent",
    SettingsFile {
        name: "recent.toml",
        text: "retrieve_k = 2\n",
    },
    |context| Ok(Box::new(RecentMessages::new(context)?)),
);

fn user(text: &str) -> Message {
    serde_json::from_value(serde_json::json!({"role": "user", "content": text})).unwrap()
}

#[tokio::test]
async fn a_new_system_runs_through_its_registry_entry() {
    let dir = tempfile::tempdir().unwrap();
    let settings = RECENT.settings(None).unwrap();
    assert_eq!(settings.retrieve_k(), 2);
    assert_eq!(RECENT.dialog_key(), "dialog_recent_messages");
    let memory = RECENT
        .build(context(engine(dir.path()), "recent", offline()))
        .unwrap();
    for (test_idx, text) in ["I keep bees.", "My hives are on the roof.", "Honey!"]
        .into_iter()
        .enumerate()
    {
        let messages = [user(text)];
        memory
            .memorize_dialog(TrainingDialog {
                test_idx: test_idx as u64,
                dataset: "Example",
                lang: Lang::En,
                messages: &messages,
                metadata: None,
            })
            .await
            .unwrap();
    }
    assert_eq!(memory.stats().unwrap().items, 3);
    let question = [Message::user("Where are my hives?")];
    let answered = memory
        .answer(&question, Lang::En, settings.retrieve_k())
        .await
        .unwrap();
    let retrieved: Vec<&str> = answered.retrieved.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(retrieved, ["Honey!", "My hives are on the roof."]);
    let prompt = &answered.messages.last().unwrap().content;
    assert!(
        prompt.contains("My hives are on the roof.") && prompt.contains("Where are my hives?"),
        "{prompt}"
    );
    assert!(!answered.response.is_empty());
}
