//! How MemoryOS's tiers are laid out in its namespace's state, and written change by change.
//!
//! - `short`: the short-term queue, the last page, counters and the clock;
//! - `long`: the long-term tier (profile and knowledge), written when an analysis changed it;
//! - `mid/<session>`: a session's summary, keywords, vector and heat counters;
//! - `page/<session>/<page number>`: one page of a session, in creation order (the same
//!   exchange filed under two topics is a page of each session).
//!
//! A page is written when it is made or changed, a session head when it changes, so a write
//! costs what changed, not what the memory holds. Sessions and pages are compared by
//! pointer: the tiers share every session and page they did not change (see `tiers`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use mb_engine::Batch;

use super::tiers::{number, LongTerm, Page, Session, Tiers};
use crate::error::MemoryError;
use crate::system::MemoryContext;

const CORE: &str = "short";
const LONG_TERM: &str = "long";
const SESSION: &str = "mid/";
const PAGE: &str = "page/";
/// Keys of the layout before this one, which stored sessions whole with their pages and the
/// long-term tier with the short-term one.
const OLD_KEYS: [&str; 2] = ["core", "session/"];

fn session_key(session: &str) -> String {
    format!("{SESSION}{session}")
}

/// A page's key: under its session, by creation number, so that a prefix scan reads a
/// session's pages in order.
fn page_key(session: &str, page: &str) -> String {
    format!("{PAGE}{session}/{:020}", number(page))
}

/// How a list of shared items changed, matched by id.
struct Diff<'a, T> {
    /// Items of the new list that are not the old allocation, with their old version if any.
    changed: Vec<(&'a Arc<T>, Option<&'a Arc<T>>)>,
    /// Items of the old list whose id is gone.
    gone: Vec<&'a Arc<T>>,
}

/// Compares `old` and `new` item by item. The usual change (items changed in place, new ones
/// appended) costs a pointer comparison per item; anything else (removals) matches by id.
fn diff<'a, T>(old: &'a [Arc<T>], new: &'a [Arc<T>], id: fn(&T) -> &str) -> Diff<'a, T> {
    let aligned = old.len() <= new.len()
        && old
            .iter()
            .zip(new)
            .all(|(o, n)| Arc::ptr_eq(o, n) || id(o) == id(n));
    if aligned {
        let changed = old
            .iter()
            .zip(new)
            .filter(|(o, n)| !Arc::ptr_eq(o, n))
            .map(|(o, n)| (n, Some(o)))
            .chain(new[old.len()..].iter().map(|n| (n, None)))
            .collect();
        return Diff {
            changed,
            gone: Vec::new(),
        };
    }
    let before: HashMap<&str, &Arc<T>> = old.iter().map(|o| (id(o), o)).collect();
    let after: HashSet<&str> = new.iter().map(|n| id(n)).collect();
    Diff {
        changed: new
            .iter()
            .map(|n| (n, before.get(id(n)).copied()))
            .filter(|(n, o)| !o.is_some_and(|o| Arc::ptr_eq(o, n)))
            .collect(),
        gone: old.iter().filter(|o| !after.contains(id(o))).collect(),
    }
}

/// Adds to `batch` what changed from `old` to `new`: the core always, the long-term tier and
/// session heads that changed, pages made or changed, and the keys of sessions and pages that
/// are gone.
pub(super) fn write_changes(
    batch: &mut Batch,
    old: &Tiers,
    new: &Tiers,
) -> Result<(), MemoryError> {
    batch.put_state(CORE, new)?;
    if !Arc::ptr_eq(&old.long_term, &new.long_term) {
        batch.put_state(LONG_TERM, new.long_term.as_ref())?;
    }
    let sessions = diff(&old.sessions, &new.sessions, |s: &Session| &s.id);
    for (session, previous) in sessions.changed {
        batch.put_state(session_key(&session.id), session.as_ref())?;
        let before = previous.map_or(&[][..], |p| &p.pages[..]);
        let pages = diff(before, &session.pages, |p: &Page| &p.id);
        for (page, _) in pages.changed {
            batch.put_state(page_key(&session.id, &page.id), page.as_ref())?;
        }
        for page in pages.gone {
            batch.delete_state(page_key(&session.id, &page.id));
        }
    }
    for gone in sessions.gone {
        batch.delete_state(session_key(&gone.id));
        for page in &gone.pages {
            batch.delete_state(page_key(&gone.id, &page.id));
        }
    }
    Ok(())
}

/// The tiers as last written (empty for a new memory).
pub(super) fn load(context: &MemoryContext) -> Result<Tiers, MemoryError> {
    let engine = &context.engine;
    let namespace = &context.namespace;
    let old_layout = OLD_KEYS
        .iter()
        .map(|prefix| engine.state_keys(namespace, prefix))
        .collect::<Result<Vec<_>, _>>()?;
    if old_layout.iter().any(|keys| !keys.is_empty()) {
        return Err(MemoryError::Config(format!(
            "MemoryOS memory in namespace `{namespace}` was written by an older memorybench \
             (another layout); delete it and memorize again"
        )));
    }
    let mut tiers: Tiers = engine.get_state(namespace, CORE)?.unwrap_or_default();
    let long_term: Option<LongTerm> = engine.get_state(namespace, LONG_TERM)?;
    tiers.long_term = Arc::new(long_term.unwrap_or_default());
    for key in engine.state_keys(namespace, SESSION)? {
        let Some(mut session) = engine.get_state::<Session>(namespace, &key)? else {
            continue;
        };
        for page_key in engine.state_keys(namespace, &format!("{PAGE}{}/", session.id))? {
            if let Some(page) = engine.get_state::<Page>(namespace, &page_key)? {
                session.pages.push(Arc::new(page));
            }
        }
        tiers.sessions.push(Arc::new(session));
    }
    // Creation order: ids are `session_<n>`.
    tiers.sessions.sort_by_key(|s| number(&s.id));
    Ok(tiers)
}
