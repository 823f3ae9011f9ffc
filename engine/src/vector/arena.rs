//! The contiguous floats of a collection: owned, or mapped from a vector file.
//!
//! A namespace reopened from its vector file (`super::file`) searches the file's pages in
//! place: mapping them costs no copy and no fresh memory, where copying 1.5 GB of a million
//! vectors into a new allocation was most of a reopen (page faults and clearing of the new
//! pages, then the copy). The first change to the collection copies the floats into memory
//! it owns ([`Arena::owned`]), so a vector file is never written through its map.
//!
//! Mapping is sound only while nobody truncates or rewrites the file in place. The engine
//! never does: a vector file is replaced by writing a new file and renaming it over the old
//! one, and deleted by unlinking it, and either leaves a mapped file's pages as they were.

use std::sync::Arc;

use memmap2::Mmap;

/// The floats of a collection's vectors, in slot order: mapped from a vector file until the
/// collection first changes, in memory of its own after that.
#[derive(Default)]
pub(crate) struct Arena {
    /// The floats, unless `mapped` holds them (then empty).
    owned: Vec<f32>,
    mapped: Option<MappedFloats>,
}

impl Arena {
    /// Floats in memory of the arena's own.
    pub(crate) fn from_vec(floats: Vec<f32>) -> Arena {
        Arena {
            owned: floats,
            mapped: None,
        }
    }

    /// Floats read in place from a vector file.
    pub(crate) fn mapped(floats: MappedFloats) -> Arena {
        Arena {
            owned: Vec::new(),
            mapped: Some(floats),
        }
    }

    /// The floats.
    pub(crate) fn as_slice(&self) -> &[f32] {
        match &self.mapped {
            Some(mapped) => mapped.as_slice(),
            None => &self.owned,
        }
    }

    /// The floats as memory of the arena's own, copied out of the file on the first call
    /// after a reopen.
    pub(crate) fn owned(&mut self) -> &mut Vec<f32> {
        if let Some(mapped) = self.mapped.take() {
            self.owned = mapped.as_slice().to_vec();
        }
        &mut self.owned
    }

    /// A copy for a background graph build: the same pages of a mapped file, or a copy of
    /// owned floats (which the collection may change while the build reads them).
    pub(crate) fn snapshot(&self) -> Arena {
        Arena {
            owned: self.owned.clone(),
            mapped: self.mapped.clone(),
        }
    }

    /// Whether the floats are read in place from a file.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped.is_some()
    }

    /// Bytes the floats occupy: heap for owned floats, page cache for mapped ones (resident
    /// once searched, so counted alike by the engine's memory budget).
    pub(crate) fn bytes(&self) -> usize {
        self.owned.capacity() * 4 + self.mapped.as_ref().map_or(0, |m| m.len * 4)
    }
}

/// `len` floats at byte `start` of a mapped file.
#[derive(Clone)]
pub(crate) struct MappedFloats {
    map: Arc<Mmap>,
    start: usize,
    len: usize,
}

impl MappedFloats {
    /// The `len` floats at byte `start` of `map`; `None` unless they lie inside it, start
    /// 4-byte aligned and this machine stores floats little-endian, as the file does.
    pub(crate) fn new(map: Arc<Mmap>, start: usize, len: usize) -> Option<MappedFloats> {
        let end = len.checked_mul(4).and_then(|bytes| start.checked_add(bytes))?;
        let aligned = (map.as_ptr() as usize).checked_add(start)? % std::mem::align_of::<f32>();
        (cfg!(target_endian = "little") && end <= map.len() && aligned == 0).then_some(
            MappedFloats { map, start, len },
        )
    }

    fn as_slice(&self) -> &[f32] {
        // SAFETY: `new` checked that the `4 * len` bytes at `start` lie inside the map and
        // are aligned for f32; every bit pattern is a valid f32; the map is read-only and
        // lives as long as `self` (the `Arc`); the engine never changes a mapped file in
        // place (module documentation).
        unsafe {
            std::slice::from_raw_parts(self.map.as_ptr().add(self.start).cast::<f32>(), self.len)
        }
    }
}
