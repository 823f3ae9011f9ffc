//! The records of a collection in slots: their ids, their vectors in one arena, the slot of
//! each id, and the holes left by changes to vectors the arena shares.
//!
//! A removal moves the last vector into the freed slot, so the arena stays dense for exact
//! scans. The shared part of an arena ([`super::arena`]: a vector file's pages, or floats
//! frozen for a graph build) is never written, and copying a mapped file into memory on a
//! reopened namespace's first removal took 240 ms at 100k vectors (2.4 s at a million). So
//! while part of the arena is shared, a removal leaves a *hole* instead: the slot is skipped by
//! searches and left out of vector files; an update leaves a hole and appends the new vector.
//! Holes stay holes once the arena is thawed (a removal moves the last slot only while there
//! are none). Once holes are a quarter of the slots, the slots are compacted into memory of
//! their own, which their number of removals pays for.
//!
//! The second exact scan of at least [`SCAN_CODES_MIN`] slots also gives them int8 codes
//! ([`super::scan`]), kept up to date by every change after until a graph serves the
//! collection, so that scans read a quarter of the bytes and still answer exactly. The first
//! reads the floats: making the codes takes longer than one scan of the floats, and a
//! collection scanned once, as the first search of one about to get its graph is, never
//! needs them (at a million MiniLM vectors they are 378 MiB beside the graph build's own).

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::arena::Arena;
use super::distance::dot;
use super::scan::{ScanCodes, SCAN_CODES_MIN};
use super::topk::TopK;
use crate::record::RecordId;

/// Vectors of records, one per slot.
pub(crate) struct Slots {
    dim: usize,
    /// The record of each slot (stale in holes).
    ids: Vec<RecordId>,
    data: Arena,
    /// The slot of each id. Record ids are the engine's own sequence numbers, never chosen by
    /// a caller, so the fast unkeyed hash is safe (SipHash building this map was a sixth of a
    /// 1M reopen's profile).
    slot_of: FxHashMap<RecordId, usize>,
    holes: Holes,
    /// The int8 codes of every slot, once a second scan has wanted them.
    scan: OnceLock<ScanCodes>,
    /// Whether a scan that could have used codes read the floats instead (the next makes them).
    scanned: AtomicBool,
}

impl Slots {
    /// No records, of `dim`-dimensional vectors.
    pub(crate) fn new(dim: usize) -> Slots {
        Slots {
            dim,
            ids: Vec::new(),
            data: Arena::default(),
            slot_of: FxHashMap::default(),
            holes: Holes::default(),
            scan: OnceLock::new(),
            scanned: AtomicBool::new(false),
        }
    }

    /// The vectors `data` (`dim` each) of `ids`, in that order; `None` if the lengths
    /// disagree or an id repeats.
    pub(crate) fn from_parts(dim: usize, ids: Vec<RecordId>, data: Arena) -> Option<Slots> {
        if dim == 0 || ids.len().checked_mul(dim) != Some(data.len()) {
            return None;
        }
        let slot_of: FxHashMap<RecordId, usize> = ids
            .iter()
            .enumerate()
            .map(|(slot, id)| (*id, slot))
            .collect();
        (slot_of.len() == ids.len()).then_some(Slots {
            ids,
            data,
            slot_of,
            ..Slots::new(dim)
        })
    }

    /// Reserves room for `n` more records.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.ids.reserve(n);
        self.data.reserve(n.saturating_mul(self.dim));
        self.slot_of.reserve(n);
    }

    /// The length of every vector.
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// Number of records.
    pub(crate) fn len(&self) -> usize {
        self.slot_of.len()
    }

    /// Estimated bytes: the arena, the id maps, the holes and the scan codes.
    pub(crate) fn bytes(&self) -> usize {
        self.data.bytes()
            + self.ids.capacity() * 8
            + self.slot_of.capacity() * 24
            + self.holes.words.capacity() * 8
            + self.scan.get().map_or(0, ScanCodes::bytes)
    }

    /// Whether some vectors are read in place from a vector file.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        self.data.is_mapped()
    }

    /// The vector of `id`, if it has one.
    pub(crate) fn get(&self, id: &RecordId) -> Option<&[f32]> {
        self.slot_of.get(id).map(|slot| self.vector(*slot))
    }

    fn vector(&self, slot: usize) -> &[f32] {
        self.data.get(slot * self.dim..(slot + 1) * self.dim)
    }

    /// Whether `slot` lies in the shared part of the arena.
    fn is_shared_slot(&self, slot: usize) -> bool {
        slot * self.dim < self.data.shared_len()
    }

    /// Inserts or replaces the vector of `id` (of the right dimension).
    pub(crate) fn upsert(&mut self, id: RecordId, vector: &[f32]) {
        debug_assert_eq!(vector.len(), self.dim);
        match self.slot_of.get(&id) {
            Some(&slot) if !self.is_shared_slot(slot) => {
                let at = slot * self.dim - self.data.shared_len();
                self.data.owned_tail()[at..at + self.dim].copy_from_slice(vector);
                if let Some(scan) = self.scan.get_mut() {
                    scan.set(slot, vector);
                }
            }
            Some(&slot) => {
                self.holes.insert(slot);
                self.append(id, vector);
                self.compact_if_holey();
            }
            None => self.append(id, vector),
        }
    }

    fn append(&mut self, id: RecordId, vector: &[f32]) {
        self.slot_of.insert(id, self.ids.len());
        self.ids.push(id);
        self.data.push(vector);
        if let Some(scan) = self.scan.get_mut() {
            scan.push(vector);
        }
    }

    /// Removes the vector of `id`; returns whether it was present.
    pub(crate) fn remove(&mut self, id: RecordId) -> bool {
        let Some(slot) = self.slot_of.remove(&id) else {
            return false;
        };
        if self.data.shared_len() > 0 || self.holes.count > 0 {
            self.holes.insert(slot);
            self.compact_if_holey();
            return true;
        }
        let last = self.ids.len() - 1;
        let data = self.data.owned_tail();
        if slot != last {
            let moved = self.ids[last];
            self.ids[slot] = moved;
            self.slot_of.insert(moved, slot);
            let (head, tail) = data.split_at_mut(last * self.dim);
            head[slot * self.dim..(slot + 1) * self.dim].copy_from_slice(&tail[..self.dim]);
        }
        self.ids.pop();
        data.truncate(last * self.dim);
        if let Some(scan) = self.scan.get_mut() {
            scan.swap_remove(slot);
        }
        true
    }

    /// Copies the records into memory of their own without holes, once holes are a quarter
    /// of the slots.
    fn compact_if_holey(&mut self) {
        if self.holes.count * 4 < self.ids.len() {
            return;
        }
        let (ids, data) = self.live_parts();
        let compact = Slots::from_parts(
            self.dim,
            ids.into_owned(),
            Arena::from_vec(data.into_owned()),
        );
        // The live records are distinct ids of whole vectors, so this always succeeds.
        if let Some(compact) = compact {
            *self = compact;
        }
    }

    /// The records and their vectors in slot order, holes left out.
    pub(crate) fn live(&self) -> impl Iterator<Item = (RecordId, &[f32])> {
        (0..self.ids.len())
            .filter(|slot| !self.holes.contains(*slot))
            .map(|slot| (self.ids[slot], self.vector(slot)))
    }

    /// The ids and vectors of [`Slots::live`] as two arrays: borrowed where the slots have
    /// no holes (the vectors where the arena is in one piece), else copied.
    pub(crate) fn live_parts(&self) -> (Cow<'_, [RecordId]>, Cow<'_, [f32]>) {
        if self.holes.count == 0 {
            return (Cow::Borrowed(&self.ids), self.data.contiguous());
        }
        let mut ids = Vec::with_capacity(self.len());
        let mut data = Vec::with_capacity(self.len() * self.dim);
        for (id, vector) in self.live() {
            ids.push(id);
            data.extend_from_slice(vector);
        }
        (Cow::Owned(ids), Cow::Owned(data))
    }

    /// A copy for a background graph build, which shares the vectors: those of a mapped
    /// file, or, when none is mapped, all of them, frozen until [`Slots::thaw`] (changes to
    /// them meanwhile leave holes). Vectors appended after a mapped part are copied.
    pub(crate) fn snapshot(&mut self) -> Slots {
        self.data.freeze();
        Slots {
            dim: self.dim,
            ids: self.ids.clone(),
            data: self.data.snapshot(),
            slot_of: FxHashMap::default(),
            holes: self.holes.clone(),
            scan: OnceLock::new(),
            scanned: AtomicBool::new(false),
        }
    }

    /// Takes the vectors frozen by [`Slots::snapshot`] back once no snapshot shares them, so
    /// that changes are made in place again.
    pub(crate) fn thaw(&mut self) {
        self.data.thaw();
    }

    /// Drops the int8 codes of exact scans, for a collection a graph now serves (the next
    /// exact scan, if the graph goes, makes them again).
    pub(crate) fn forget_scan_codes(&mut self) {
        self.scan = OnceLock::new();
        self.scanned = AtomicBool::new(false);
    }

    /// Whether exact scans have their int8 codes.
    #[cfg(test)]
    pub(crate) fn has_scan_codes(&self) -> bool {
        self.scan.get().is_some()
    }

    /// Exact top-`k` of the unit vector `query` by scanning every vector: through the int8
    /// codes from [`SCAN_CODES_MIN`] slots on (made by the second such scan), by their floats
    /// below that, in the first such scan, or when every record is asked for.
    pub(crate) fn exact_search(&self, query: &[f32], k: usize) -> Vec<(RecordId, f32)> {
        if self.ids.len() >= SCAN_CODES_MIN && k < self.len() {
            let scan = match self.scan.get() {
                Some(scan) => scan,
                None if !self.scanned.swap(true, Ordering::Relaxed) => {
                    return self.float_search(query, k)
                }
                None => self.scan.get_or_init(|| {
                    ScanCodes::encode(self.dim, (0..self.ids.len()).map(|slot| self.vector(slot)))
                }),
            };
            return scan.search(
                query,
                k,
                |slot| !self.holes.contains(slot),
                |slot| (self.ids[slot], dot(query, self.vector(slot))),
            );
        }
        self.float_search(query, k)
    }

    /// Exact top-`k` of the unit vector `query` by the floats of every vector.
    fn float_search(&self, query: &[f32], k: usize) -> Vec<(RecordId, f32)> {
        let mut top = TopK::new(k);
        if self.holes.count == 0 {
            for (slot, id) in self.ids.iter().enumerate() {
                top.offer(*id, dot(query, self.vector(slot)));
            }
        } else {
            for (id, vector) in self.live() {
                top.offer(id, dot(query, vector));
            }
        }
        top.into_sorted()
    }
}

/// A set of slots, as bits.
#[derive(Default, Clone)]
struct Holes {
    words: Vec<u64>,
    count: usize,
}

impl Holes {
    fn insert(&mut self, slot: usize) {
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        if self.words[word] & bit == 0 {
            self.words[word] |= bit;
            self.count += 1;
        }
    }

    fn contains(&self, slot: usize) -> bool {
        self.words
            .get(slot / 64)
            .is_some_and(|w| w & (1u64 << (slot % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Arc;

    use memmap2::Mmap;

    use super::*;
    use crate::vector::mapped::{le_bytes, Mapped};
    use crate::vector::seeded_unit;

    const DIM: usize = 4;

    /// The records of `slots` by id, with their vectors.
    fn sorted(slots: &Slots) -> Vec<(RecordId, Vec<f32>)> {
        let mut pairs: Vec<(RecordId, Vec<f32>)> =
            slots.live().map(|(id, v)| (id, v.to_vec())).collect();
        pairs.sort_by_key(|(id, _)| *id);
        pairs
    }

    /// Records `0..n` with seeded unit vectors of `dim`, twice: mapped from a file, and owned.
    fn mapped_and_owned(dim: usize, n: u64) -> (Slots, Slots) {
        let ids: Vec<RecordId> = (0..n).map(RecordId).collect();
        let data: Vec<f32> = (0..n).flat_map(|i| seeded_unit(i, dim)).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&le_bytes(&data)).unwrap();
        // SAFETY: the test's own temporary file, not changed while mapped.
        let map = Arc::new(unsafe { Mmap::map(&file) }.unwrap());
        let arena = Arena::mapped(Mapped::new(map, 0, data.len()).unwrap());
        let mapped = Slots::from_parts(dim, ids.clone(), arena).unwrap();
        let owned = Slots::from_parts(dim, ids, Arena::from_vec(data)).unwrap();
        (mapped, owned)
    }

    /// Step `step` of a fixed jumble of removals, updates of old and of appended records,
    /// and additions.
    fn jumble(slots: &mut Slots, step: u64) {
        let id = RecordId(step * 37 % 80);
        match step % 3 {
            0 => {
                slots.remove(id);
            }
            _ => slots.upsert(id, &seeded_unit(1000 + step, DIM)),
        }
    }

    /// Asserts that `slots` hold and answer what `owned` does, after step `step`.
    fn assert_answer_alike(slots: &Slots, owned: &Slots, step: u64) {
        assert_eq!(sorted(slots), sorted(owned), "after step {step}");
        assert_eq!(slots.len(), owned.len());
        let query = seeded_unit(500 + step, DIM);
        assert_eq!(slots.exact_search(&query, 5), owned.exact_search(&query, 5));
    }

    #[test]
    fn changes_to_mapped_slots_are_seen_as_changes_to_owned_ones() {
        let (mut mapped, mut owned) = mapped_and_owned(DIM, 64);
        assert!(mapped.is_mapped());
        for step in 0..40u64 {
            for slots in [&mut mapped, &mut owned] {
                jumble(slots, step);
            }
            assert_answer_alike(&mapped, &owned, step);
            let (ids, data) = mapped.live_parts();
            assert_eq!((ids.len(), data.len()), (mapped.len(), mapped.len() * DIM));
        }
        assert!(!mapped.is_mapped(), "compacted once holes were a quarter");
    }

    #[test]
    fn a_snapshot_shares_the_vectors_and_changes_meanwhile_are_seen_as_changes_to_owned_ones() {
        let (_, mut frozen) = mapped_and_owned(DIM, 64);
        let (_, mut owned) = mapped_and_owned(DIM, 64);
        let before = sorted(&frozen);
        let mut snapshot = Some(frozen.snapshot());
        let shares = |s: &Slots, f: &Slots| std::ptr::eq(s.vector(0), f.vector(0));
        assert!(
            shares(snapshot.as_ref().unwrap(), &frozen),
            "shared, not copied"
        );
        // The jumble of the test above, a thaw tried after every step; the snapshot goes at
        // step 10, after removals have left holes (the last slot one of them), which must
        // stay holes once thawed.
        for step in 0..40u64 {
            if step == 10 {
                let gone = snapshot.take().unwrap();
                assert_eq!(sorted(&gone), before, "the snapshot saw no change");
            }
            for slots in [&mut frozen, &mut owned] {
                jumble(slots, step);
                if step == 9 {
                    slots.upsert(RecordId(999), &seeded_unit(999, DIM));
                    slots.remove(RecordId(999));
                }
            }
            frozen.thaw();
            assert_eq!(frozen.data.shared_len() > 0, step < 10, "step {step}");
            assert_answer_alike(&frozen, &owned, step);
        }
    }

    #[test]
    fn the_second_scan_makes_the_codes_and_a_graph_resets_the_count() {
        let (_, mut slots) = mapped_and_owned(DIM, SCAN_CODES_MIN as u64);
        let query = seeded_unit(7, DIM);
        let floats = slots.float_search(&query, 3);
        assert_eq!(slots.exact_search(&query, 3), floats);
        assert!(!slots.has_scan_codes(), "one scan read the floats");
        assert_eq!(slots.exact_search(&query, 3), floats);
        assert!(slots.has_scan_codes(), "the second made the codes");
        slots.forget_scan_codes();
        slots.exact_search(&query, 3);
        assert!(
            !slots.has_scan_codes(),
            "counted afresh once a graph served them"
        );
    }

    #[test]
    fn scans_through_codes_answer_as_the_floats_through_changes() {
        let dim = 24;
        let n = SCAN_CODES_MIN as u64 + 200;
        let (mapped, owned) = mapped_and_owned(dim, n);
        for mut slots in [mapped, owned] {
            for step in 0..300u64 {
                let query = seeded_unit(90_000 + step, dim);
                for k in [1, 10] {
                    assert_eq!(
                        slots.exact_search(&query, k),
                        slots.float_search(&query, k),
                        "step {step}, k {k}"
                    );
                }
                assert!(slots.scan.get().is_some(), "the second scan made the codes");
                let id = RecordId(step * 7919 % (n + 100));
                match step % 4 {
                    0 => {
                        slots.remove(id);
                    }
                    _ => slots.upsert(id, &seeded_unit(5_000 + step, dim)),
                }
            }
        }
    }
}
