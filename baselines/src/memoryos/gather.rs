//! What a question reads from MemoryOS: the best pages of the nearest relevant sessions,
//! knowledge from both stores, the short-term queue and the profile (and the visits it pays the
//! sessions it used).

use std::sync::Arc;

use super::ops::MultiTopicSummary;
use mb_core::Lang;

use super::select::sessions_to_read;
use super::tiers::{cosine, KnowledgeEntry, Page, Qa};
use super::{exchange, top_by, MemoryOs};
use crate::embedding::embed_text;
use crate::error::MemoryError;
use crate::system::Retrieved;

impl MemoryOs {
    /// Retrieval for `query`: the `kept` best-scoring pages (upstream's retrieval queue
    /// capacity, 7, is `retrieve_k`'s default), and the knowledge of both stores; marks the
    /// sessions used as visited.
    pub(super) async fn gather(
        &self,
        query: &str,
        lang: Lang,
        kept: usize,
    ) -> Result<Gathered, MemoryError> {
        let vector = embed_text(&self.embedder, query.to_string()).await?;
        // Upstream's session search returns before asking for the query's keywords when the
        // mid-term memory has no session yet.
        let no_sessions = self.tiers.lock().sessions.is_empty();
        let keywords: Vec<String> = if no_sessions {
            Vec::new()
        } else {
            self.context
                .llm
                .memory
                .run(&MultiTopicSummary::new(query), lang)
                .await?
                .into_iter()
                .flat_map(|t| t.keywords)
                .collect()
        };
        let old = self.tiers.lock().clone();
        let mut tiers = old.clone();
        let now = tiers.tick();
        let mut pages: Vec<(f32, Arc<Page>)> = Vec::new();
        for (index, _) in sessions_to_read(&tiers.sessions, &vector, &keywords) {
            let pages_of = &tiers.sessions[index].pages;
            let found: Vec<(f32, Arc<Page>)> = top_by(pages_of, 20, |p| cosine(&vector, &p.vector))
                .into_iter()
                .filter(|(_, score)| *score >= 0.1)
                .map(|(i, score)| (score, Arc::clone(&pages_of[i])))
                .collect();
            if !found.is_empty() {
                let session = Arc::make_mut(&mut tiers.sessions[index]);
                session.n_visit += 1;
                session.access_count += 1;
                session.last_visit_ms = now;
                pages.extend(found);
            }
        }
        pages.sort_by(|a, b| b.0.total_cmp(&a.0));
        pages.truncate(kept);
        let pages = pages
            .into_iter()
            .map(|(score, page)| GatheredPage {
                score,
                meta: tiers.meta_of(&page).to_string(),
                page,
            })
            .collect();
        let knowledge = |store: &[KnowledgeEntry]| -> Vec<(f32, String)> {
            top_by(store, 20, |e| cosine(&vector, &e.vector))
                .into_iter()
                .filter(|(_, score)| *score >= 0.01)
                .map(|(i, score)| (score, store[i].text.clone()))
                .collect()
        };
        let gathered = Gathered {
            user_knowledge: knowledge(&tiers.long_term.user_knowledge),
            assistant_knowledge: knowledge(&tiers.long_term.assistant_knowledge),
            pages,
            short_term: tiers.short_term.clone(),
            profile: tiers.long_term.profile.clone(),
        };
        self.persist(&old, &tiers)?;
        *self.tiers.lock() = tiers;
        Ok(gathered)
    }
}

/// A page a question retrieved, with its cosine and the thread summary it shows.
pub(super) struct GatheredPage {
    pub(super) score: f32,
    pub(super) page: Arc<Page>,
    pub(super) meta: String,
}

/// What a question retrieved.
pub(super) struct Gathered {
    pub(super) pages: Vec<GatheredPage>,
    pub(super) user_knowledge: Vec<(f32, String)>,
    pub(super) assistant_knowledge: Vec<(f32, String)>,
    pub(super) short_term: Vec<Qa>,
    pub(super) profile: Option<String>,
}

impl Gathered {
    pub(super) fn retrieved(&self) -> Vec<Retrieved> {
        let pages = self.pages.iter().map(|found| Retrieved {
            doc_id: found.page.id.clone(),
            score: found.score,
            text: exchange(&found.page.qa).render(),
            turns: found.page.qa.turns.clone(),
        });
        let knowledge = self
            .user_knowledge
            .iter()
            .chain(&self.assistant_knowledge)
            .map(|(score, text)| Retrieved {
                doc_id: "knowledge".into(),
                score: *score,
                text: text.clone(),
                turns: Vec::new(),
            });
        pages.chain(knowledge).collect()
    }
}
