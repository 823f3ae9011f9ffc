//! MemoryOS (`memoryos`): a short-term queue that spills into mid-term sessions of pages, and a
//! long-term user profile and knowledge, all through the LLM layer's `memory` role.
//!
//! Each exchange joins the short-term queue (capacity 7); once full, the oldest exchange is
//! evicted into a page: its continuity with the previous page is checked and the thread's
//! running summary (meta-info) updated; the evicted batch is summarized into at most two topics,
//! and its pages filed into the one of the five nearest sessions whose summary matches the topic
//! (cosine + keyword Jaccard ≥ 0.6) or into a new session keyworded by its summary (least
//! frequently used sessions are evicted beyond 2000).
//! Sessions heat up (`N_visit + L_interaction + exp(−Δh/24)`); when the hottest reaches 5, its
//! unanalyzed pages update the user profile and the knowledge stores (100 entries each), and its
//! heat resets. Questions read the five nearest sessions with relevance ≥ 0.1 and keep their
//! `retrieve_k` best pages (upstream's retrieval queue of 7 by default), with knowledge and the
//! short-term queue, in upstream's prompt structure.
//!
//! Upstream drops evicted exchanges with an empty side, which leaves only the last turns of a
//! LoCoMo or DialSim corpus (every corpus turn has one empty side); `keep_one_sided = true` in
//! `configs/memory/memoryos.toml` files them as pages instead. Every tier is written through to
//! the engine after each exchange (upstream writes its metadata only when the process exits),
//! change by change: a page once, when it is made or changed (see `stored`).

mod consolidate;
mod gather;
pub mod ops;
mod prompt;
mod select;
mod settings;
mod stored;
#[cfg(test)]
mod tests;
mod thread;
mod tiers;

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use mb_core::Lang;
use mb_datasets::corpus::{turn_line, Conversation};
use mb_datasets::dataset::CorpusFormat;
use mb_embed::Embedder;
use mb_engine::Batch;
use mb_llm::ops::Answer;
use mb_llm::{LlmError, Message, Role};
use ops::Exchange;
use parking_lot::Mutex;

use crate::error::MemoryError;
use crate::store::{ensure_namespace, required_embedder};
use crate::system::{
    last_user_text, AnswerTiming, Answered, CorpusMemory, CorpusUnit, MemoryContext, MemoryStats,
    MemorySystem, Retrieved, TrainingDialog,
};
use gather::Gathered;
pub use settings::{MemoryOsSettings, ThreadSummaries, Timestamps};
use tiers::{Qa, Tiers, SHORT_TERM_CAPACITY};

/// The MemoryOS memory.
pub struct MemoryOs {
    context: MemoryContext,
    embedder: Arc<dyn Embedder>,
    tiers: Mutex<Tiers>,
    keep_one_sided: bool,
    thread_summaries: ThreadSummaries,
    metadata_at_exit: bool,
    timestamps: Timestamps,
    keep_creation_pages: bool,
}

impl MemoryOs {
    /// Opens the memory in the context's namespace (its tiers as last written).
    pub fn new(context: MemoryContext) -> Result<MemoryOs, MemoryError> {
        let embedder = required_embedder(&context, "memoryos")?;
        ensure_namespace(&context, &context.namespace)?;
        let tiers = stored::load(&context)?;
        let MemoryOsSettings {
            keep_one_sided,
            thread_summaries,
            metadata_at_exit,
            timestamps,
            keep_creation_pages,
        } = context.settings.own()?;
        Ok(MemoryOs {
            context,
            embedder,
            tiers: Mutex::new(tiers),
            keep_one_sided,
            thread_summaries,
            metadata_at_exit,
            timestamps,
            keep_creation_pages,
        })
    }

    /// Writes what changed from `old` to `new` in one engine write (see `stored`).
    fn persist(&self, old: &Tiers, new: &Tiers) -> Result<(), MemoryError> {
        let mut batch = Batch::new();
        stored::write_changes(&mut batch, old, new)?;
        self.context.engine.write(&self.context.namespace, batch)?;
        Ok(())
    }

    /// Upstream's `add_memory`: one exchange in, evictions filed, profile and knowledge
    /// updated when a session is hot; written through as one engine write.
    async fn add_memory(&self, qa: Qa, lang: Lang) -> Result<(), MemoryError> {
        let old = self.tiers.lock().clone();
        let mut tiers = old.clone();
        tiers.tick();
        tiers.short_term.push(qa);
        let mut evicted = Vec::new();
        while tiers.short_term.len() >= SHORT_TERM_CAPACITY {
            evicted.push(tiers.short_term.remove(0));
        }
        evicted
            .retain(|qa| self.keep_one_sided || (!qa.user.is_empty() && !qa.assistant.is_empty()));
        if !evicted.is_empty() {
            self.file(&mut tiers, evicted, lang).await?;
            self.analyze_hottest(&mut tiers, lang).await?;
        }
        self.persist(&old, &tiers)?;
        *self.tiers.lock() = tiers;
        Ok(())
    }
}

#[async_trait]
impl MemorySystem for MemoryOs {
    fn context(&self) -> &MemoryContext {
        &self.context
    }

    async fn memorize_dialog(&self, dialog: TrainingDialog<'_>) -> Result<(), MemoryError> {
        let messages: Vec<_> = dialog
            .messages
            .iter()
            .skip_while(|m| m.role == Role::System)
            .collect();
        let mut i = 0;
        while i < messages.len() {
            let next = messages.get(i + 1);
            let (user, assistant) = match (messages[i].role, next.map(|m| m.role)) {
                (Role::User, None) => (messages[i].content.clone(), String::new()),
                (Role::User, Some(Role::Assistant)) => (
                    messages[i].content.clone(),
                    next.map(|m| m.content.clone()).unwrap_or_default(),
                ),
                (Role::Assistant, Some(Role::User)) => (
                    next.map(|m| m.content.clone()).unwrap_or_default(),
                    messages[i].content.clone(),
                ),
                _ => {
                    i += 2;
                    continue;
                }
            };
            let qa = Qa {
                user,
                assistant,
                timestamp: self.timestamps.stamp(dialog.test_idx, i),
                turns: Vec::new(),
            };
            self.add_memory(qa, dialog.lang).await?;
            i += 2;
        }
        Ok(())
    }

    async fn memorize_corpus(
        &self,
        corpus: &Conversation,
        format: CorpusFormat,
    ) -> Result<CorpusMemory, MemoryError> {
        let mut units = Vec::new();
        let dates = corpus.turn_documents();
        for (turn, (timestamp, _)) in corpus.sessions.iter().flat_map(|s| &s.turns).zip(dates) {
            let first_speaker = format == CorpusFormat::DialSim
                || corpus.speaker_a.as_deref() == Some(turn.speaker.as_str());
            // Upstream's turn line, `Speaker <name>says : <text>`, on the speaker's side.
            let (user, assistant) = if first_speaker {
                (turn_line(turn), String::new())
            } else {
                (String::new(), turn_line(turn))
            };
            self.add_memory(
                Qa {
                    user,
                    assistant,
                    timestamp,
                    turns: vec![turn.dia_id.clone()],
                },
                self.context.lang,
            )
            .await?;
            units.push(CorpusUnit {
                doc_id: turn.dia_id.clone(),
                turns: vec![turn.dia_id.clone()],
            });
        }
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
        Ok(self.gather(query, lang, k).await?.retrieved())
    }

    /// Removes the corpus's exchanges from the short-term queue and its pages from the
    /// sessions (upstream cannot delete; profile and knowledge already derived stay).
    fn delete_corpus(&self, corpus: &CorpusMemory) -> Result<(), MemoryError> {
        let turns: std::collections::HashSet<&str> = corpus
            .units
            .iter()
            .flat_map(|u| u.turns.iter().map(String::as_str))
            .collect();
        let from_corpus = |qa: &Qa| qa.turns.iter().any(|t| turns.contains(t.as_str()));
        let old = self.tiers.lock().clone();
        let mut tiers = old.clone();
        tiers.short_term.retain(|qa| !from_corpus(qa));
        let mut removed = Vec::new();
        for session in &mut tiers.sessions {
            if session.pages.iter().any(|p| from_corpus(&p.qa)) {
                let session = Arc::make_mut(session);
                removed.extend(
                    session
                        .pages
                        .iter()
                        .filter(|p| from_corpus(&p.qa))
                        .map(|p| tiers::number(&p.id)),
                );
                session.pages.retain(|p| !from_corpus(&p.qa));
            }
        }
        tiers.sessions.retain(|s| !s.pages.is_empty());
        tiers.break_thread_at_removed(removed);
        if tiers.last_page.as_ref().is_some_and(|p| from_corpus(&p.qa)) {
            tiers.last_page = None;
        }
        self.persist(&old, &tiers)?;
        *self.tiers.lock() = tiers;
        Ok(())
    }

    fn stats(&self) -> Result<MemoryStats, MemoryError> {
        let tiers = self.tiers.lock();
        let pages = tiers
            .sessions
            .iter()
            .flat_map(|s| s.pages.iter().map(Arc::as_ref));
        let text_bytes = pages
            .clone()
            .chain(tiers.last_page.iter())
            .map(|p| p.qa.user.len() + p.qa.assistant.len() + tiers.meta_of(p).len())
            .sum::<usize>()
            + tiers
                .short_term
                .iter()
                .map(|qa| qa.user.len() + qa.assistant.len())
                .sum::<usize>();
        Ok(MemoryStats {
            items: (pages.count()
                + tiers.short_term.len()
                + tiers.long_term.user_knowledge.len()
                + tiers.long_term.assistant_knowledge.len()) as u64,
            text_bytes: text_bytes as u64,
            llm_operations: tiers.llm_operations,
        })
    }

    /// Retrieval visits sessions: their visit counts and recency make them hot.
    /// Upstream's metadata file (short-term queue, sessions with their pages, profile) does
    /// not exist until the process exits; the knowledge collections live in Chroma and stay.
    fn lose_state_unsaved_before_exit(&self) -> Result<(), MemoryError> {
        if !self.metadata_at_exit {
            return Ok(());
        }
        let old = self.tiers.lock().clone();
        let mut tiers = old.clone();
        tiers.short_term.clear();
        tiers.last_page = None;
        tiers.open_thread = None;
        tiers.sessions.clear();
        std::sync::Arc::make_mut(&mut tiers.long_term).profile = None;
        self.persist(&old, &tiers)?;
        *self.tiers.lock() = tiers;
        Ok(())
    }

    fn retrieval_changes_memory(&self) -> bool {
        true
    }

    /// Upstream's MemoryOS configuration has no `retrieve_k`: one attempt per answer.
    fn retries_with_fewer_memories(&self) -> bool {
        false
    }

    async fn answer(
        &self,
        messages: &[Message],
        lang: Lang,
        k: usize,
    ) -> Result<Answered, MemoryError> {
        let started = Instant::now();
        let query = last_user_text(messages);
        let gathered = self.gather(&query, lang, k).await?;
        let retrieved = gathered.retrieved();
        let text = match self.context.llm.wording.checkout() {
            Some(upstream) => prompt::render_upstream(upstream, &gathered, &query, lang)
                .map_err(|e| MemoryError::Llm(LlmError::Upstream(e)))?,
            None => prompt::render(&gathered, &query, lang),
        };
        let mut prompt = messages.to_vec();
        if let Some(last) = prompt.last_mut() {
            last.content = text;
        }
        let memory_seconds = started.elapsed().as_secs_f64();
        let evidence = retrieved.iter().map(|r| r.text.clone()).collect();
        let operation = Answer::new(prompt.clone()).with_evidence(query, evidence);
        let asked = Instant::now();
        let response = self.context.llm.answer.run(&operation, lang).await?;
        Ok(Answered {
            messages: prompt,
            response,
            retrieved,
            timing: AnswerTiming {
                memory_seconds,
                llm_seconds: asked.elapsed().as_secs_f64(),
            },
        })
    }
}

/// A queued exchange as the LLM operations see it.
fn exchange(qa: &Qa) -> Exchange {
    Exchange {
        user: qa.user.clone(),
        assistant: qa.assistant.clone(),
    }
}

/// Indices and scores of the `k` items scoring highest, best first (equal scores in item
/// order, as a stable sort would leave them). Linear in the items: a selection, not a sort.
fn top_by<T>(items: &[T], k: usize, score: impl Fn(&T) -> f32) -> Vec<(usize, f32)> {
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut scored: Vec<(usize, f32)> = items
        .iter()
        .enumerate()
        .map(|(i, item)| (i, score(item)))
        .collect();
    if k == 0 {
        return Vec::new();
    }
    if scored.len() > k {
        scored.select_nth_unstable_by(k - 1, order);
        scored.truncate(k);
    }
    scored.sort_by(order);
    scored
}
