//! The floats of a collection's vectors: a shared part that nothing changes (a vector file's
//! pages, or floats frozen for a background graph build), then floats of the arena's own.
//!
//! A namespace reopened from its vector file (`super::file`) searches the file's pages in
//! place ([`super::mapped`]): copying 1.5 GB of a million vectors into a new allocation was
//! most of a reopen (page faults and clearing of the new pages, then the copy). Vectors added
//! afterwards go into memory of the arena's own after the shared ones, so an agent that only
//! adds memories never copies the file. Only the owned floats are ever changed
//! ([`Arena::owned_tail`]; `super::slots` leaves holes for changes to shared vectors), so a
//! vector file is never written through its map.
//!
//! A graph build reads every vector for a minute at 100k while writes go on. It used to copy
//! the owned floats (147 MiB at 100k, the largest part of the stores benchmark's peak RSS);
//! now [`Arena::freeze`] moves them behind an `Arc` that the build shares, changes to them
//! leave holes as changes to a file's pages do, and [`Arena::thaw`] takes them back once the
//! build has let go.
//!
//! The owned floats grow by doubling while small and by an eighth once large
//! ([`super::growth`]).

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use super::growth::make_room;
use super::mapped::Mapped;

/// Floats that several owners read and none changes.
#[derive(Clone)]
enum Shared {
    /// A vector file's pages.
    Mapped(Mapped<f32>),
    /// Floats of the arena's own, frozen while a graph build reads them.
    Frozen(Arc<Vec<f32>>),
}

impl Shared {
    fn as_slice(&self) -> &[f32] {
        match self {
            Shared::Mapped(mapped) => mapped.as_slice(),
            Shared::Frozen(frozen) => frozen,
        }
    }
}

/// The floats of a collection's vectors, in slot order: the shared ones first (if any), then
/// those in memory of the arena's own. A vector never straddles the two, since the shared
/// part holds whole vectors.
#[derive(Default)]
pub(crate) struct Arena {
    shared: Option<Shared>,
    /// The floats after the shared ones; all of them once nothing is shared.
    owned: Vec<f32>,
}

impl Arena {
    /// Floats in memory of the arena's own.
    pub(crate) fn from_vec(floats: Vec<f32>) -> Arena {
        Arena {
            shared: None,
            owned: floats,
        }
    }

    /// Floats read in place from a vector file.
    pub(crate) fn mapped(floats: Mapped<f32>) -> Arena {
        Arena {
            shared: Some(Shared::Mapped(floats)),
            owned: Vec::new(),
        }
    }

    /// Number of shared floats, which are never changed here.
    pub(crate) fn shared_len(&self) -> usize {
        self.shared
            .as_ref()
            .map_or(0, |shared| shared.as_slice().len())
    }

    /// Number of floats.
    pub(crate) fn len(&self) -> usize {
        self.shared_len() + self.owned.len()
    }

    /// The floats of `range`, which lies inside one vector.
    pub(crate) fn get(&self, range: Range<usize>) -> &[f32] {
        match &self.shared {
            Some(shared) if range.start < shared.as_slice().len() => &shared.as_slice()[range],
            _ => {
                let skip = self.shared_len();
                &self.owned[range.start - skip..range.end - skip]
            }
        }
    }

    /// Appends floats (a whole vector) without copying what is shared.
    pub(crate) fn push(&mut self, floats: &[f32]) {
        make_room(&mut self.owned, floats.len());
        self.owned.extend_from_slice(floats);
    }

    /// Reserves room for `additional` more floats, exactly: callers know how many come.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.owned.reserve_exact(additional);
    }

    /// The floats after the shared ones, in memory of the arena's own (all of them when
    /// nothing is shared), to change in place.
    pub(crate) fn owned_tail(&mut self) -> &mut Vec<f32> {
        &mut self.owned
    }

    /// The floats as one slice: borrowed when they are all in one place, else copied.
    pub(crate) fn contiguous(&self) -> Cow<'_, [f32]> {
        match &self.shared {
            None => Cow::Borrowed(&self.owned),
            Some(shared) if self.owned.is_empty() => Cow::Borrowed(shared.as_slice()),
            Some(shared) => Cow::Owned([shared.as_slice(), &self.owned].concat()),
        }
    }

    /// Makes every float shared, without copying, when none is shared yet: the owned floats
    /// move behind an `Arc` for [`Arena::snapshot`] to share.
    pub(crate) fn freeze(&mut self) {
        if self.shared.is_none() && !self.owned.is_empty() {
            self.shared = Some(Shared::Frozen(Arc::new(std::mem::take(&mut self.owned))));
        }
    }

    /// Takes frozen floats back into memory of the arena's own once no snapshot shares
    /// them, the floats appended since after them.
    pub(crate) fn thaw(&mut self) {
        match self.shared.take() {
            Some(Shared::Frozen(frozen)) => match Arc::try_unwrap(frozen) {
                Ok(mut floats) => {
                    make_room(&mut floats, self.owned.len());
                    floats.append(&mut self.owned);
                    self.owned = floats;
                }
                Err(still_shared) => self.shared = Some(Shared::Frozen(still_shared)),
            },
            other => self.shared = other,
        }
    }

    /// A copy for a background graph build: the shared floats shared (a file's pages, or
    /// floats frozen by [`Arena::freeze`]), and a copy of the owned ones (which the
    /// collection may change while the build reads them).
    pub(crate) fn snapshot(&self) -> Arena {
        Arena {
            shared: self.shared.clone(),
            owned: self.owned.clone(),
        }
    }

    /// Whether some floats are read in place from a file.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.shared, Some(Shared::Mapped(_)))
    }

    /// Bytes the floats occupy: heap for owned and frozen floats, page cache for mapped ones
    /// (resident once searched, so counted alike by the engine's memory budget).
    pub(crate) fn bytes(&self) -> usize {
        self.owned.capacity() * 4 + self.shared_len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Floats (64 MiB) far enough past the arrays' doubling (`super::growth`) that they grow
    /// by an eighth.
    const LARGE: usize = 16 << 20;

    #[test]
    fn a_full_large_arena_grows_by_an_eighth_not_double() {
        let len = LARGE;
        let mut arena = Arena::from_vec(vec![0.5; len]);
        assert_eq!(arena.bytes(), len * 4);
        arena.push(&[0.25; 384]);
        assert_eq!(arena.len(), len + 384);
        assert!(
            arena.bytes() <= (len + len / 8) * 4 + 4096,
            "{}",
            arena.bytes()
        );
        assert_eq!(arena.get(len..len + 384), &[0.25; 384][..]);
    }

    #[test]
    fn thawing_after_a_build_grows_by_an_eighth_not_double() {
        let len = LARGE;
        let mut arena = Arena::from_vec(vec![0.5; len]);
        arena.freeze();
        let snapshot = arena.snapshot();
        arena.push(&[0.25; 384]);
        drop(snapshot);
        arena.thaw();
        assert_eq!(arena.shared_len(), 0);
        assert_eq!(arena.len(), len + 384);
        assert!(
            arena.bytes() <= (len + len / 8) * 4 + 4096,
            "{}",
            arena.bytes()
        );
        assert_eq!(arena.get(len - 1..len + 1), &[0.5, 0.25][..]);
    }
}
