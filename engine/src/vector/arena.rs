//! The floats of a collection's vectors: mapped from a vector file, then owned.
//!
//! A namespace reopened from its vector file (`super::file`) searches the file's pages in
//! place ([`super::mapped`]): copying 1.5 GB of a million vectors into a new allocation was
//! most of a reopen (page faults and clearing of the new pages, then the copy). Vectors added
//! afterwards go into memory of the arena's own after the mapped ones, so an agent that only
//! adds memories never copies the file. Only the owned floats are ever changed
//! ([`Arena::owned_tail`]; `super::slots` leaves holes for changes to mapped vectors), so a
//! vector file is never written through its map.

use std::borrow::Cow;
use std::ops::Range;

use super::mapped::Mapped;

/// The floats of a collection's vectors, in slot order: those read in place from a vector
/// file first (if any), then those in memory of the arena's own. A vector never straddles
/// the two, since the mapped part holds whole vectors.
#[derive(Default)]
pub(crate) struct Arena {
    mapped: Option<Mapped<f32>>,
    /// The floats after the mapped ones; all of them once nothing is mapped.
    owned: Vec<f32>,
}

impl Arena {
    /// Floats in memory of the arena's own.
    pub(crate) fn from_vec(floats: Vec<f32>) -> Arena {
        Arena {
            mapped: None,
            owned: floats,
        }
    }

    /// Floats read in place from a vector file.
    pub(crate) fn mapped(floats: Mapped<f32>) -> Arena {
        Arena {
            mapped: Some(floats),
            owned: Vec::new(),
        }
    }

    /// Number of floats read in place from a file.
    pub(crate) fn mapped_len(&self) -> usize {
        self.mapped.as_ref().map_or(0, Mapped::len)
    }

    /// Number of floats.
    pub(crate) fn len(&self) -> usize {
        self.mapped_len() + self.owned.len()
    }

    /// The floats of `range`, which lies inside one vector.
    pub(crate) fn get(&self, range: Range<usize>) -> &[f32] {
        match &self.mapped {
            Some(mapped) if range.start < mapped.len() => &mapped.as_slice()[range],
            _ => {
                let skip = self.mapped_len();
                &self.owned[range.start - skip..range.end - skip]
            }
        }
    }

    /// Appends floats (a whole vector) without copying what is mapped.
    pub(crate) fn push(&mut self, floats: &[f32]) {
        self.owned.extend_from_slice(floats);
    }

    /// Reserves room for `additional` more floats.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.owned.reserve(additional);
    }

    /// The floats after the mapped ones, in memory of the arena's own (all of them when
    /// nothing is mapped), to change in place.
    pub(crate) fn owned_tail(&mut self) -> &mut Vec<f32> {
        &mut self.owned
    }

    /// The floats as one slice: borrowed when they are all in one place, else copied.
    pub(crate) fn contiguous(&self) -> Cow<'_, [f32]> {
        match &self.mapped {
            None => Cow::Borrowed(&self.owned),
            Some(mapped) if self.owned.is_empty() => Cow::Borrowed(mapped.as_slice()),
            Some(mapped) => Cow::Owned([mapped.as_slice(), &self.owned].concat()),
        }
    }

    /// A copy for a background graph build: the same pages of a mapped file, and a copy of
    /// owned floats (which the collection may change while the build reads them).
    pub(crate) fn snapshot(&self) -> Arena {
        Arena {
            mapped: self.mapped.clone(),
            owned: self.owned.clone(),
        }
    }

    /// Whether some floats are read in place from a file.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped.is_some()
    }

    /// Bytes the floats occupy: heap for owned floats, page cache for mapped ones (resident
    /// once searched, so counted alike by the engine's memory budget).
    pub(crate) fn bytes(&self) -> usize {
        self.owned.capacity() * 4 + self.mapped_len() * 4
    }
}
