//! MemoryOS's three tiers as plain data: the short-term queue, mid-term sessions of pages with
//! their heat, and the long-term profile and knowledge stores. The memory keeps them in memory
//! and writes every change through to the engine (`state` keys of its namespace).
//!
//! Sessions and pages are shared (`Arc`): a change starts from a copy of the tiers that costs a
//! pointer per session, copies only the sessions and pages it changes (`Arc::make_mut`), and
//! what changed is found by pointer, so memorizing an exchange costs the same however many
//! pages the memory holds.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Short-term capacity (upstream's `short_term_capacity`).
pub const SHORT_TERM_CAPACITY: usize = 7;
/// Mid-term sessions kept before the least frequently used one is evicted.
pub const MID_TERM_CAPACITY: usize = 2000;
/// Session match threshold on cosine + keyword Jaccard.
pub const SESSION_MATCH: f32 = 0.6;
/// Heat from which a session's pages are analyzed for profile and knowledge.
pub const HEAT_THRESHOLD: f64 = 5.0;
/// Knowledge entries kept per store.
pub const KNOWLEDGE_CAPACITY: usize = 100;

/// One user/assistant exchange waiting in the short-term queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Qa {
    /// The user's input (empty for an assistant-only corpus turn).
    pub user: String,
    /// The assistant's response (empty for a user-only corpus turn).
    pub assistant: String,
    /// When it happened, as given.
    pub timestamp: String,
    /// Corpus turns it holds (LoCoMo `dia_id`s), for retrieval metrics.
    pub turns: Vec<String>,
}

/// An evicted exchange filed into a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// `page_<n>`.
    pub id: String,
    /// The exchange.
    pub qa: Qa,
    /// The previous page of the same conversation thread, when continuous.
    pub pre_page: Option<String>,
    /// The running summary of its thread, as it was when the page left the open thread
    /// (read it with [`Tiers::meta_of`]).
    pub meta_info: String,
    /// Keywords (from a summary call per page).
    pub keywords: Vec<String>,
    /// Embedding of `User: … Assistant: …`.
    pub vector: Vec<f32>,
    /// Whether profile and knowledge were extracted from it.
    pub analyzed: bool,
    /// Whether the session's page list holds it (upstream's JSON backup): upstream's
    /// `memoryos_chromadb` loses the pages a session is created with (see
    /// `MemoryOsSettings::keep_creation_pages`), which are then never analyzed and show no
    /// thread summary when retrieved.
    #[serde(default = "backed_up_by_default")]
    pub backed_up: bool,
}

/// Pages stored before the flag existed were all listed.
fn backed_up_by_default() -> bool {
    true
}

/// A mid-term session: a topic summary and its pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// `session_<n>`.
    pub id: String,
    /// Topic summary.
    pub summary: String,
    /// Summary keywords.
    pub keywords: Vec<String>,
    /// Embedding of the summary.
    pub vector: Vec<f32>,
    /// Its pages, oldest (lowest-numbered) first; stored under keys of their own.
    #[serde(skip)]
    pub pages: Vec<Arc<Page>>,
    /// Times retrieval used it since its last analysis.
    pub n_visit: u64,
    /// Pages added since its last analysis.
    pub l_interaction: u64,
    /// Last visit, on the memory's clock (milliseconds).
    pub last_visit_ms: i64,
    /// Times retrieval used it (LFU eviction).
    pub access_count: u64,
}

impl Session {
    /// `N_visit + L_interaction + exp(−Δhours/24)`.
    pub fn heat(&self, now_ms: i64) -> f64 {
        let hours = (now_ms - self.last_visit_ms).max(0) as f64 / 3_600_000.0;
        self.n_visit as f64 + self.l_interaction as f64 + (-hours / 24.0).exp()
    }
}

/// One long-term knowledge entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeEntry {
    /// The knowledge.
    pub text: String,
    /// Its embedding.
    pub vector: Vec<f32>,
    /// When it was stored (milliseconds since the epoch).
    pub at_ms: i64,
}

/// The long-term tier: what analyses of hot sessions drew from their pages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LongTerm {
    /// The user profile text.
    pub profile: Option<String>,
    /// Private facts about the user.
    pub user_knowledge: Vec<KnowledgeEntry>,
    /// Knowledge the assistant stated.
    pub assistant_knowledge: Vec<KnowledgeEntry>,
}

/// The open thread (see `thread`): the pages numbered `from` on, continuous with each other, share `meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenThread {
    /// The number of the first page upstream's walk still reaches.
    pub from: u64,
    /// The thread's running summary.
    pub meta: String,
}

/// Everything MemoryOS remembers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tiers {
    /// Short-term queue, oldest first.
    pub short_term: Vec<Qa>,
    /// The last page filed (continuity is checked against it).
    pub last_page: Option<Page>,
    /// The open thread, whose running summary the newest pages share (see `thread`).
    pub open_thread: Option<OpenThread>,
    /// Mid-term sessions; stored under keys of their own.
    #[serde(skip)]
    pub sessions: Vec<Arc<Session>>,
    /// The long-term tier; stored under a key of its own, written when it changes.
    #[serde(skip)]
    pub long_term: Arc<LongTerm>,
    /// Next page and session number.
    pub next_id: u64,
    /// LLM operations run to build the memory.
    pub llm_operations: u64,
    /// The memory's own clock (milliseconds), which heat's recency decays with: it advances
    /// [`CLOCK_STEP_MS`] per exchange memorized and per retrieval, so the same inputs give the
    /// same memory on every run (upstream reads the wall clock).
    pub clock_ms: i64,
}

/// How far the memory's clock advances per exchange memorized and per retrieval: about what one
/// takes with a model in the loop.
pub const CLOCK_STEP_MS: i64 = 1_000;

impl Tiers {
    /// Advances the memory's clock by one event and returns the new time.
    pub fn tick(&mut self) -> i64 {
        self.clock_ms += CLOCK_STEP_MS;
        self.clock_ms
    }

    /// A fresh id with `prefix`.
    pub fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}_{}", self.next_id)
    }

    /// Drops the least frequently used session beyond the mid-term capacity.
    pub fn evict_lfu(&mut self) {
        while self.sessions.len() > MID_TERM_CAPACITY {
            if let Some(coldest) = self
                .sessions
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.access_count)
                .map(|(i, _)| i)
            {
                let evicted = self.sessions.remove(coldest);
                self.break_thread_at_removed(evicted.pages.iter().map(|p| number(&p.id)));
            }
        }
    }
}

/// Adds a knowledge entry, keeping the newest `KNOWLEDGE_CAPACITY`.
pub fn remember(store: &mut Vec<KnowledgeEntry>, entry: KnowledgeEntry) {
    store.push(entry);
    while store.len() > KNOWLEDGE_CAPACITY {
        if let Some(oldest) = store
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| e.at_ms)
            .map(|(i, _)| i)
        {
            store.remove(oldest);
        }
    }
}

/// The creation number of a page or session id (`page_12` → 12): pages are numbered in the order
/// they were made, which is also their order within a session.
pub fn number(id: &str) -> u64 {
    id.rsplit('_')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Cosine similarity of unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Jaccard similarity of two keyword sets; case-sensitive, as upstream's Python sets.
pub fn jaccard(a: &[String], b: &[String]) -> f32 {
    let a: std::collections::BTreeSet<&str> = a.iter().map(String::as_str).collect();
    let b: std::collections::BTreeSet<&str> = b.iter().map(String::as_str).collect();
    let union = a.union(&b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(&b).count() as f32 / union as f32
    }
}

#[cfg(test)]
impl Session {
    /// A session with nothing in it yet, for tests to fill in.
    pub fn empty(id: impl Into<String>) -> Session {
        Session {
            id: id.into(),
            summary: String::new(),
            keywords: Vec::new(),
            vector: Vec::new(),
            pages: Vec::new(),
            n_visit: 0,
            l_interaction: 0,
            last_visit_ms: 0,
            access_count: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_decays_and_similarity_combines() {
        let session = Session {
            n_visit: 2,
            l_interaction: 3,
            ..Session::empty("s")
        };
        assert!((session.heat(0) - 6.0).abs() < 1e-9);
        // A day later the recency term is e^-1.
        assert!((session.heat(86_400_000) - (5.0 + (-1.0f64).exp())).abs() < 1e-9);
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(
            (jaccard(&words(&["dog", "walk"]), &words(&["dog", "park"])) - 1.0 / 3.0).abs() < 1e-6
        );
        // Keywords are compared as written: "Dog" is not "dog".
        assert_eq!(
            jaccard(&words(&["Dog", "walk"]), &words(&["dog", "park"])),
            0.0
        );
        assert_eq!(jaccard(&[], &[]), 0.0);
        let mut store = Vec::new();
        for i in 0..(KNOWLEDGE_CAPACITY + 5) {
            remember(
                &mut store,
                KnowledgeEntry {
                    text: i.to_string(),
                    vector: Vec::new(),
                    at_ms: i as i64,
                },
            );
        }
        assert_eq!(store.len(), KNOWLEDGE_CAPACITY);
        assert_eq!(store[0].text, "5");
    }
}
