//! The units upstream's retrieval baselines store: one per message or turn (BM25-M, Emb-M) or
//! one per dialog or session (BM25-S, Emb-S), with upstream's ids and texts.

use mb_datasets::corpus::Conversation;

use crate::error::MemoryError;
use crate::system::{CorpusMemory, CorpusUnit, TrainingDialog};

/// How finely a retrieval baseline cuts what it memorizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// One unit per dialog message or corpus turn.
    Message,
    /// One unit per dialog or corpus session.
    Session,
}

/// One memory unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Upstream's document id.
    pub doc_id: String,
    /// The text searched (BM25-S and Emb-S search the first user message of a dialog).
    pub index_text: String,
    /// The text returned into the prompt.
    pub content: String,
    /// The corpus turns covered (LoCoMo `dia_id`s), for retrieval metrics.
    pub turns: Vec<String>,
}

/// What memorizing `units` of a corpus into `namespace` left in the memory.
pub fn corpus_memory(namespace: &str, units: Vec<Unit>) -> CorpusMemory {
    CorpusMemory {
        namespace: namespace.to_string(),
        units: units
            .into_iter()
            .map(|u| CorpusUnit {
                doc_id: u.doc_id,
                turns: u.turns,
            })
            .collect(),
    }
}

/// Units of a training dialog: messages as `Speaker <role> says: <content>` with ids
/// `conv_<test_idx>_<i>`, or the whole dialog as `<role>: <content>` lines with id
/// `conv_<test_idx>` searched by its first user message. A session unit without a user message
/// to search by is [`MemoryError::BadDialog`] (upstream raises).
pub fn dialog_units(
    dialog: TrainingDialog<'_>,
    granularity: Granularity,
) -> Result<Vec<Unit>, MemoryError> {
    match granularity {
        Granularity::Message => Ok(dialog
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let text = format!("Speaker {} says: {}", m.role.as_str(), m.content);
                Unit {
                    doc_id: format!("conv_{}_{i}", dialog.test_idx),
                    index_text: text.clone(),
                    content: text,
                    turns: Vec::new(),
                }
            })
            .collect()),
        Granularity::Session => {
            let first_user = dialog
                .messages
                .iter()
                .find(|m| m.role == mb_llm::Role::User)
                .ok_or_else(|| MemoryError::BadDialog {
                    test_idx: dialog.test_idx,
                    reason: "no user message to index the dialog by".into(),
                })?;
            let content = dialog
                .messages
                .iter()
                .map(|m| format!("{}: {}", m.role.as_str(), m.content))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(vec![Unit {
                doc_id: format!("conv_{}", dialog.test_idx),
                index_text: first_user.content.clone(),
                content,
                turns: Vec::new(),
            }])
        }
    }
}

/// Units of a corpus: turns (`<date> Turn <n>` ids, the id, a newline and the turn line) or
/// sessions (the date as id, `Coversation [<date>]:` and one line per turn, searched in full).
pub fn corpus_units(conversation: &Conversation, granularity: Granularity) -> Vec<Unit> {
    match granularity {
        Granularity::Message => conversation
            .turn_documents()
            .into_iter()
            .zip(conversation.sessions.iter().flat_map(|s| &s.turns))
            .map(|((doc_id, content), turn)| Unit {
                doc_id,
                index_text: content.clone(),
                content,
                turns: vec![turn.dia_id.clone()],
            })
            .collect(),
        Granularity::Session => conversation
            .session_documents()
            .into_iter()
            .zip(&conversation.sessions)
            .map(|((doc_id, content), session)| Unit {
                doc_id,
                index_text: content.clone(),
                content,
                turns: session.turns.iter().map(|t| t.dia_id.clone()).collect(),
            })
            .collect(),
    }
}

/// Upstream's long-context rendering of the first `sessions` sessions (Vanilla on corpus
/// datasets): one `<speaker>: <text>` line per turn.
pub fn long_context(conversation: &Conversation, sessions: usize) -> String {
    conversation
        .sessions
        .iter()
        .take(sessions)
        .flat_map(|s| &s.turns)
        .map(|t| format!("{}: {}\n", t.speaker, t.text))
        .collect()
}
