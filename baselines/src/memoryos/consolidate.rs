//! What becomes of exchanges evicted from the short-term queue: pages (continuity with the
//! previous page, the thread's running summary), filed by topic into mid-term sessions; and,
//! when a session is hot, the long-term user profile and knowledge drawn from its pages.

use std::sync::Arc;

use super::ops::{
    Exchange, ExtractKnowledge, IsContinuous, MetaSummary, MultiTopicSummary, Topic, UpdateProfile,
};
use mb_core::Lang;

use super::select::session_to_join;
use super::tiers::{number, remember, KnowledgeEntry, Page, Qa, Session, Tiers, HEAT_THRESHOLD};
use super::ThreadSummaries;
use super::{exchange, MemoryOs};
use crate::embedding::{embed_text, embed_texts};
use crate::error::MemoryError;

/// The summary upstream files a batch under when the model found no topic in it.
const GENERAL_SUMMARY: &str = "General conversation segment from short-term memory.";

impl MemoryOs {
    /// Turns evicted exchanges into pages and files them into sessions.
    pub(super) async fn file(
        &self,
        tiers: &mut Tiers,
        evicted: Vec<Qa>,
        lang: Lang,
    ) -> Result<(), MemoryError> {
        let memory = &self.context.llm.memory;
        let texts: Vec<String> = evicted.iter().map(|qa| exchange(qa).render()).collect();
        let inline: Vec<String> = evicted.iter().map(|qa| exchange(qa).inline()).collect();
        let vectors = embed_texts(&self.embedder, inline).await?;
        let mut pages = Vec::new();
        for (qa, vector) in evicted.into_iter().zip(vectors) {
            let current = exchange(&qa);
            let (pre_page, meta_info) = match tiers.last_page.clone() {
                Some(previous) => {
                    tiers.llm_operations += 1;
                    if memory
                        .run(
                            &IsContinuous::new(exchange(&previous.qa), current.clone()),
                            lang,
                        )
                        .await?
                    {
                        tiers.llm_operations += 1;
                        let summary = tiers.meta_of(&previous).to_string();
                        let meta = memory
                            .run(&MetaSummary::new(Some(summary), current), lang)
                            .await?;
                        // The pip package shows the new summary on the whole chain;
                        // memoryos_chromadb leaves the earlier pages as they were filed.
                        if self.thread_summaries == ThreadSummaries::Latest {
                            tiers.continue_thread(&previous, &meta);
                        }
                        (Some(previous.id), meta)
                    } else {
                        tiers.llm_operations += 1;
                        (
                            None,
                            memory.run(&MetaSummary::new(None, current), lang).await?,
                        )
                    }
                }
                None => {
                    tiers.llm_operations += 1;
                    (
                        None,
                        memory.run(&MetaSummary::new(None, current), lang).await?,
                    )
                }
            };
            let page = Page {
                id: tiers.fresh("page"),
                qa,
                pre_page,
                meta_info,
                keywords: Vec::new(),
                vector,
                analyzed: false,
                backed_up: true,
            };
            if page.pre_page.is_none() && self.thread_summaries == ThreadSummaries::Latest {
                tiers.open_thread(number(&page.id), &page.meta_info);
            }
            tiers.last_page = Some(page.clone());
            pages.push(page);
        }
        let batch_text = texts.join("\n");
        tiers.llm_operations += 1;
        let mut topics: Vec<Topic> = memory
            .run(&MultiTopicSummary::new(batch_text.clone()), lang)
            .await?;
        if topics.is_empty() {
            // Upstream's fallback: one general session, keyworded by another summary call.
            tiers.llm_operations += 1;
            let keywords = memory
                .run(&MultiTopicSummary::new(batch_text), lang)
                .await?
                .into_iter()
                .flat_map(|t| t.keywords)
                .collect();
            topics.push(Topic {
                theme: "general".into(),
                keywords,
                content: GENERAL_SUMMARY.into(),
            });
        }
        // Every topic the model gave (the prompt asks for at most two; upstream keeps all).
        for topic in topics {
            self.insert(tiers, &topic, pages.clone(), lang).await?;
        }
        Ok(())
    }

    /// `insert_pages_into_session`: merge into the best matching session or open a new one.
    pub(super) async fn insert(
        &self,
        tiers: &mut Tiers,
        topic: &Topic,
        mut pages: Vec<Page>,
        lang: Lang,
    ) -> Result<(), MemoryError> {
        let vector = embed_text(&self.embedder, topic.content.clone()).await?;
        let now = tiers.clock_ms;
        let best = session_to_join(&tiers.sessions, &vector, &topic.keywords);
        // A new session is keyworded by its summary alone, before its pages (upstream's
        // `add_session`); the topic's own keywords only served to match it.
        let summary_keywords = match best {
            Some(_) => Vec::new(),
            None => {
                tiers.llm_operations += 1;
                self.context
                    .llm
                    .memory
                    .run(&MultiTopicSummary::new(topic.content.clone()), lang)
                    .await?
                    .into_iter()
                    .flat_map(|t| t.keywords)
                    .collect()
            }
        };
        // Keywords of every page, one summary call each, in page order as upstream asks.
        for page in &mut pages {
            let call = MultiTopicSummary::new(exchange(&page.qa).inline());
            let topics = self.context.llm.memory.run(&call, lang).await?;
            page.keywords = topics.into_iter().flat_map(|t| t.keywords).collect();
            tiers.llm_operations += 1;
        }
        match best {
            Some(index) => {
                let session = Arc::make_mut(&mut tiers.sessions[index]);
                session.l_interaction += pages.len() as u64;
                session.n_visit += 1;
                session.last_visit_ms = now;
                session.pages.extend(pages.into_iter().map(Arc::new));
            }
            None => {
                if !self.keep_creation_pages {
                    for page in &mut pages {
                        page.backed_up = false;
                    }
                }
                let id = tiers.fresh("session");
                tiers.sessions.push(Arc::new(Session {
                    id,
                    summary: topic.content.clone(),
                    keywords: summary_keywords,
                    vector,
                    l_interaction: pages.len() as u64,
                    pages: pages.into_iter().map(Arc::new).collect(),
                    n_visit: 0,
                    last_visit_ms: now,
                    access_count: 0,
                }));
                tiers.evict_lfu();
            }
        }
        Ok(())
    }

    /// Profile and knowledge from the hottest session's unanalyzed pages, when it is hot.
    pub(super) async fn analyze_hottest(
        &self,
        tiers: &mut Tiers,
        lang: Lang,
    ) -> Result<(), MemoryError> {
        let now = tiers.clock_ms;
        let Some(index) = (0..tiers.sessions.len()).max_by(|&a, &b| {
            tiers.sessions[a]
                .heat(now)
                .total_cmp(&tiers.sessions[b].heat(now))
        }) else {
            return Ok(());
        };
        let session = &tiers.sessions[index];
        let unanalyzed = |p: &Page| p.backed_up && !p.analyzed;
        if session.heat(now) < HEAT_THRESHOLD || !session.pages.iter().any(|p| unanalyzed(p)) {
            return Ok(());
        }
        let exchanges: Vec<Exchange> = session
            .pages
            .iter()
            .filter(|p| unanalyzed(p))
            .map(|p| exchange(&p.qa))
            .collect();
        let memory = &self.context.llm.memory;
        let profile = UpdateProfile::new(tiers.long_term.profile.clone(), exchanges.clone());
        let mut knowledge = ExtractKnowledge::new(exchanges);
        if let Some(upstream) = self.context.llm.wording.checkout() {
            let markers = upstream
                .memoryos_knowledge_markers()
                .map_err(|e| MemoryError::Llm(mb_llm::LlmError::Upstream(e)))?;
            knowledge = knowledge.with_upstream_markers(markers);
        }
        // The two analyses are independent: run them together.
        let (profile, knowledge) =
            futures::join!(memory.run(&profile, lang), memory.run(&knowledge, lang));
        tiers.llm_operations += 2;
        let knowledge = knowledge?;
        let long_term = Arc::make_mut(&mut tiers.long_term);
        long_term.profile = Some(profile?);
        for (text, user) in [(knowledge.user_private, true), (knowledge.assistant, false)] {
            let Some(text) = text.filter(|t| !t.trim().is_empty() && t.trim() != "None") else {
                continue;
            };
            let entry = KnowledgeEntry {
                vector: embed_text(&self.embedder, text.clone()).await?,
                text,
                at_ms: now,
            };
            remember(
                if user {
                    &mut long_term.user_knowledge
                } else {
                    &mut long_term.assistant_knowledge
                },
                entry,
            );
        }
        let session = Arc::make_mut(&mut tiers.sessions[index]);
        for page in session.pages.iter_mut().filter(|p| unanalyzed(p)) {
            Arc::make_mut(page).analyzed = true;
        }
        session.n_visit = 0;
        session.l_interaction = 0;
        Ok(())
    }
}
