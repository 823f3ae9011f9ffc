//! The running summary of MemoryOS's open conversation thread, kept once.
//!
//! Upstream writes a thread's new summary into every page of the chain ending at the newest
//! page (following `pre_page` links until a page is missing), so a long continuous
//! conversation rewrites all of its pages for every exchange: quadratic work, and here
//! quadratic engine writes. The pages that walk reaches are exactly the pages made since the
//! thread opened or last broke (a page is made continuous with the page made just before it),
//! so the open thread's summary is kept once in the tiers, and every page numbered from
//! [`OpenThread::from`] on reads it from there ([`Tiers::meta_of`]). A page takes its own copy
//! once, when the thread closes or breaks before it. What each page shows is what upstream's
//! walk would have written (a model-based test checks it against the walk).
//!
//! Pages are filed one evicted exchange at a time (the short-term queue evicts one per
//! exchange once full), so no page of the thread is ever waiting outside the sessions while
//! the summary changes.

use std::collections::HashSet;
use std::sync::Arc;

use super::tiers::{number, OpenThread, Page, Tiers};

impl Tiers {
    /// The thread summary `page` shows.
    pub fn meta_of<'a>(&'a self, page: &'a Page) -> &'a str {
        if !page.backed_up {
            // Upstream reads the summary from the session's backup, which lacks the page.
            return "";
        }
        match &self.open_thread {
            Some(open) if number(&page.id) >= open.from => &open.meta,
            _ => &page.meta_info,
        }
    }

    /// A page continuous with the newest page (`previous`) gave the thread the summary `meta`
    /// (upstream rewrites it into every page of the chain).
    pub fn continue_thread(&mut self, previous: &Page, meta: &str) {
        match &mut self.open_thread {
            Some(open) => open.meta = meta.to_string(),
            None => {
                self.open_thread = Some(OpenThread {
                    from: number(&previous.id),
                    meta: meta.to_string(),
                })
            }
        }
    }

    /// A page that does not continue the newest one opens a thread at its number `from`: the
    /// pages of the thread it closes keep that thread's summary.
    pub fn open_thread(&mut self, from: u64, meta: &str) {
        self.settle(u64::MAX);
        self.open_thread = Some(OpenThread {
            from,
            meta: meta.to_string(),
        });
    }

    /// Pages numbered `removed` were taken out of sessions. One of the open thread's that no
    /// session holds any more breaks the chain there: the thread's pages before it keep the
    /// summary they show now, and only the pages after it follow later summaries.
    pub fn break_thread_at_removed(&mut self, removed: impl IntoIterator<Item = u64>) {
        let Some(from) = self.open_thread.as_ref().map(|o| o.from) else {
            return;
        };
        let candidates: Vec<u64> = removed.into_iter().filter(|&n| n >= from).collect();
        if candidates.is_empty() {
            return;
        }
        let present: HashSet<u64> = self
            .sessions
            .iter()
            .flat_map(|s| s.pages[open_start(&s.pages, from)..].iter())
            .map(|p| number(&p.id))
            .collect();
        let Some(gone) = candidates
            .into_iter()
            .filter(|n| !present.contains(n))
            .max()
        else {
            return;
        };
        self.settle(gone);
        if let Some(open) = &mut self.open_thread {
            open.from = gone + 1;
        }
    }

    /// The open thread's pages numbered below `upto` (and the newest page's own copy) take its
    /// summary as their own.
    fn settle(&mut self, upto: u64) {
        let Some(open) = &self.open_thread else {
            return;
        };
        let (from, meta) = (open.from, open.meta.clone());
        for session in &mut self.sessions {
            let stale = |p: &Arc<Page>| number(&p.id) < upto && p.meta_info != meta;
            let start = open_start(&session.pages, from);
            if !session.pages[start..].iter().any(stale) {
                continue;
            }
            for page in &mut Arc::make_mut(session).pages[start..] {
                if stale(page) {
                    Arc::make_mut(page).meta_info = meta.clone();
                }
            }
        }
        if let Some(last) = &mut self.last_page {
            if number(&last.id) >= from {
                last.meta_info = meta;
            }
        }
    }
}

/// Where a session's pages numbered `from` on begin: its tail, as a session's pages ascend by
/// number.
fn open_start(pages: &[Arc<Page>], from: u64) -> usize {
    pages.partition_point(|p| number(&p.id) < from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memoryos::tiers::{Qa, Session};

    /// A page as upstream keeps it: its own summary, rewritten by the walk.
    #[derive(Clone)]
    struct Upstream {
        number: u64,
        pre: Option<u64>,
        meta: String,
    }

    /// Upstream's walk: the newest page's copy, then every page of the chain ending at it,
    /// in every session, until a page is missing.
    fn walk(sessions: &mut [Vec<Upstream>], last: &mut Upstream, meta: &str) {
        last.meta = meta.to_string();
        let mut target = Some(last.number);
        while let Some(wanted) = target.take() {
            for page in sessions.iter_mut().flatten().filter(|p| p.number == wanted) {
                page.meta = meta.to_string();
                target = page.pre;
            }
        }
    }

    fn page(id: String, pre_page: Option<String>, meta: &str) -> Page {
        Page {
            id,
            qa: Qa {
                user: String::new(),
                assistant: String::new(),
                timestamp: String::new(),
                turns: Vec::new(),
            },
            pre_page,
            meta_info: meta.to_string(),
            keywords: Vec::new(),
            vector: Vec::new(),
            analyzed: false,
            backed_up: true,
        }
    }

    /// Random pages (continuous or not, filed in one or two sessions), removed pages and
    /// sessions and a dropped newest page: every page shows what upstream's walk wrote.
    #[test]
    fn every_page_shows_what_upstreams_walk_wrote() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let (mut settled, mut broken) = (0, 0);
        for _round in 0..20 {
            let mut tiers = Tiers::default();
            let mut upstream: Vec<Vec<Upstream>> = Vec::new();
            let mut last: Option<Upstream> = None;
            for step in 0..300 {
                let meta = format!("summary {step}");
                match next(20) {
                    0..=13 => {
                        let continuous = last.is_some() && next(10) < 8;
                        let id = tiers.fresh("page");
                        let made = number(&id);
                        let pre = match (&mut last, &tiers.last_page) {
                            (Some(up), Some(previous)) if continuous => {
                                walk(&mut upstream, up, &meta);
                                let previous = previous.clone();
                                tiers.continue_thread(&previous, &meta);
                                Some(previous.id)
                            }
                            _ => {
                                if tiers.open_thread.is_some() {
                                    settled += 1;
                                }
                                tiers.open_thread(made, &meta);
                                None
                            }
                        };
                        let new = page(id, pre.clone(), &meta);
                        let mut targets = vec![next(upstream.len() as u64 + 1) as usize];
                        if next(3) == 0 {
                            targets.push(next(upstream.len() as u64 + 1) as usize);
                        }
                        targets.dedup();
                        for target in targets {
                            if target == upstream.len() {
                                upstream.push(Vec::new());
                                let id = tiers.fresh("session");
                                tiers.sessions.push(Arc::new(Session::empty(id)));
                            }
                            upstream[target].push(Upstream {
                                number: made,
                                pre: pre.as_deref().map(number),
                                meta: meta.clone(),
                            });
                            Arc::make_mut(&mut tiers.sessions[target])
                                .pages
                                .push(Arc::new(new.clone()));
                        }
                        last = Some(Upstream {
                            number: made,
                            pre: pre.as_deref().map(number),
                            meta: meta.clone(),
                        });
                        tiers.last_page = Some(new);
                    }
                    14..=16 if !upstream.is_empty() => {
                        let s = next(upstream.len() as u64) as usize;
                        if upstream[s].is_empty() {
                            continue;
                        }
                        let i = next(upstream[s].len() as u64) as usize;
                        let gone = upstream[s].remove(i).number;
                        Arc::make_mut(&mut tiers.sessions[s]).pages.remove(i);
                        let before = tiers.open_thread.as_ref().map(|o| o.from);
                        tiers.break_thread_at_removed([gone]);
                        if tiers.open_thread.as_ref().map(|o| o.from) != before {
                            broken += 1;
                        }
                    }
                    17 if !upstream.is_empty() => {
                        let s = next(upstream.len() as u64) as usize;
                        upstream.remove(s);
                        let gone = tiers.sessions.remove(s);
                        tiers.break_thread_at_removed(gone.pages.iter().map(|p| number(&p.id)));
                    }
                    18 => {
                        last = None;
                        tiers.last_page = None;
                    }
                    _ => {}
                }
                for (expected, session) in upstream.iter().zip(&tiers.sessions) {
                    for (up, page) in expected.iter().zip(&session.pages) {
                        assert_eq!(tiers.meta_of(page), up.meta, "step {step}, {}", page.id);
                    }
                }
                if let (Some(up), Some(page)) = (&last, &tiers.last_page) {
                    assert_eq!(tiers.meta_of(page), up.meta, "step {step}, newest page");
                }
            }
        }
        assert!(
            settled > 100 && broken > 20,
            "{settled} closed, {broken} broken"
        );
    }
}
