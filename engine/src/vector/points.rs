//! Which graph point holds each record: an array indexed by record id where the ids are
//! dense, a hash map where they are not.
//!
//! The engine numbers records from one counter, so a namespace written alone has consecutive
//! ids and one whose writes interleave with others' has ids a few apart. An array then costs
//! four bytes per id in its range, against about twenty-four per entry for a hash map, and is
//! filled in order: rebuilding a reopened 100k graph's map had been 100k scattered hash
//! inserts, a fifth of the first vector search (docs/history.md). Ids spread wider than
//! [`SPREAD`] times the entries, or below the first one seen, turn the array into a map.

use rustc_hash::FxHashMap;

use crate::record::RecordId;

/// Id range per entry beyond which the array would cost more than a map.
const SPREAD: u64 = 4;

/// Slots an array may always have, whatever its number of entries.
const SMALL: u64 = 1024;

/// An empty array slot.
const NONE: u32 = u32::MAX;

/// Record id to point.
#[derive(Debug, Clone)]
pub(crate) struct PointMap {
    repr: Repr,
    len: usize,
}

#[derive(Debug, Clone)]
enum Repr {
    /// `slots[i]` is the point of record `base + i`, or [`NONE`].
    Dense {
        base: u64,
        slots: Vec<u32>,
    },
    Sparse(FxHashMap<RecordId, u32>),
}

impl Default for PointMap {
    fn default() -> Self {
        PointMap {
            repr: Repr::Sparse(FxHashMap::default()),
            len: 0,
        }
    }
}

impl PointMap {
    /// The map of `entries`, or the first record that comes twice.
    pub(crate) fn from_entries(
        entries: impl Iterator<Item = (RecordId, u32)> + Clone,
    ) -> Result<Self, RecordId> {
        let (count, bounds) = entries
            .clone()
            .fold((0u64, None), |(count, bounds), (id, _)| {
                let bounds: Option<(u64, u64)> = bounds;
                let bounds = bounds.map_or((id.0, id.0), |(lo, hi)| (lo.min(id.0), hi.max(id.0)));
                (count + 1, Some(bounds))
            });
        let mut map = match bounds {
            Some((lo, hi)) if fits(hi - lo, count) => PointMap {
                repr: Repr::Dense {
                    base: lo,
                    slots: vec![NONE; (hi - lo + 1) as usize],
                },
                len: 0,
            },
            _ => PointMap::default(),
        };
        if let Repr::Sparse(hashed) = &mut map.repr {
            hashed.reserve(count as usize);
        }
        for (id, point) in entries {
            if map.insert(id, point).is_some() {
                return Err(id);
            }
        }
        Ok(map)
    }

    /// Number of records.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Estimated heap bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.repr {
            Repr::Dense { slots, .. } => slots.capacity() * 4,
            Repr::Sparse(map) => map.capacity() * 24,
        }
    }

    /// The point of `id`.
    pub(crate) fn get(&self, id: RecordId) -> Option<u32> {
        match &self.repr {
            Repr::Dense { base, slots } => {
                let slot = usize::try_from(id.0.checked_sub(*base)?).ok()?;
                slots.get(slot).copied().filter(|p| *p != NONE)
            }
            Repr::Sparse(map) => map.get(&id).copied(),
        }
    }

    /// Whether `id` has a point.
    pub(crate) fn contains(&self, id: RecordId) -> bool {
        self.get(id).is_some()
    }

    /// Gives `id` the point `point`; returns the one it had.
    pub(crate) fn insert(&mut self, id: RecordId, point: u32) -> Option<u32> {
        if let Repr::Dense { base, slots } = &mut self.repr {
            // Within the slots, or growing them no wider than is worth it.
            let slot =
                id.0.checked_sub(*base)
                    .filter(|slot| *slot < slots.len() as u64 || fits(*slot, self.len as u64 + 1));
            match slot {
                Some(slot) if point != NONE => {
                    let slot = slot as usize;
                    if slot >= slots.len() {
                        slots.resize(slot + 1, NONE);
                    }
                    let old = std::mem::replace(&mut slots[slot], point);
                    if old == NONE {
                        self.len += 1;
                        return None;
                    }
                    return Some(old);
                }
                _ => self.make_sparse(),
            }
        }
        let Repr::Sparse(map) = &mut self.repr else {
            return None;
        };
        let old = map.insert(id, point);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Takes `id`'s point away; returns it.
    pub(crate) fn remove(&mut self, id: RecordId) -> Option<u32> {
        let old = match &mut self.repr {
            Repr::Dense { base, slots } => {
                let slot = usize::try_from(id.0.checked_sub(*base)?).ok()?;
                let old = std::mem::replace(slots.get_mut(slot)?, NONE);
                (old != NONE).then_some(old)
            }
            Repr::Sparse(map) => map.remove(&id),
        };
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// Every record with a point, in no particular order.
    pub(crate) fn records(&self) -> Box<dyn Iterator<Item = RecordId> + '_> {
        match &self.repr {
            Repr::Dense { base, slots } => Box::new(
                (*base..)
                    .zip(slots)
                    .filter(|(_, p)| **p != NONE)
                    .map(|(id, _)| RecordId(id)),
            ),
            Repr::Sparse(map) => Box::new(map.keys().copied()),
        }
    }

    fn make_sparse(&mut self) {
        let mut map = FxHashMap::default();
        map.reserve(self.len);
        map.extend(self.records().filter_map(|id| Some((id, self.get(id)?))));
        self.repr = Repr::Sparse(map);
    }
}

/// Whether an array spanning `span` ids beyond its first is worth it for `count` entries.
fn fits(span: u64, count: u64) -> bool {
    span < SMALL || span / SPREAD <= count
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn is_dense(map: &PointMap) -> bool {
        matches!(map.repr, Repr::Dense { .. })
    }

    /// Applies `ops` (id, Some(point) to insert, None to remove) to a map and to a `HashMap`,
    /// checking every answer and the contents after each.
    fn agrees_with_a_hash_map(mut map: PointMap, ops: &[(u64, Option<u32>)]) -> PointMap {
        let mut model: HashMap<u64, u32> = map
            .records()
            .map(|id| (id.0, map.get(id).unwrap()))
            .collect();
        for &(id, op) in ops {
            let id_ = RecordId(id);
            match op {
                Some(p) => assert_eq!(map.insert(id_, p), model.insert(id, p), "insert {id}"),
                None => assert_eq!(map.remove(id_), model.remove(&id), "remove {id}"),
            }
            assert_eq!(map.len(), model.len());
            assert_eq!(map.get(id_), model.get(&id).copied());
        }
        let mut records: Vec<u64> = map.records().map(|id| id.0).collect();
        records.sort_unstable();
        let mut expected: Vec<u64> = model.keys().copied().collect();
        expected.sort_unstable();
        assert_eq!(records, expected);
        for (id, p) in &model {
            assert!(map.contains(RecordId(*id)));
            assert_eq!(map.get(RecordId(*id)), Some(*p));
        }
        map
    }

    #[test]
    fn consecutive_ids_stay_in_an_array_through_growth_and_removals() {
        let map =
            PointMap::from_entries((100..5100u64).map(|id| (RecordId(id), (id - 100) as u32)))
                .unwrap();
        assert!(is_dense(&map));
        let ops: Vec<(u64, Option<u32>)> = (0..3000u64)
            .map(|i| match i % 3 {
                0 => (100 + i, None),
                1 => (5100 + i, Some(i as u32)),
                _ => (100 + i, Some(7)),
            })
            .collect();
        let map = agrees_with_a_hash_map(map, &ops);
        assert!(is_dense(&map));
        assert_eq!(map.get(RecordId(99)), None);
        assert_eq!(map.get(RecordId(u64::MAX)), None);
    }

    #[test]
    fn spread_or_earlier_ids_turn_the_array_into_a_map_with_the_same_contents() {
        let dense = || {
            PointMap::from_entries((0..2000u64).map(|id| (RecordId(id + 10), id as u32))).unwrap()
        };
        // An id below the first.
        let map = agrees_with_a_hash_map(dense(), &[(3, Some(1)), (12, None)]);
        assert!(!is_dense(&map));
        // An id far beyond the rest.
        let map = agrees_with_a_hash_map(dense(), &[(1 << 40, Some(9)), (11, Some(4))]);
        assert!(!is_dense(&map));
        // The point that marks an empty slot.
        let map = agrees_with_a_hash_map(dense(), &[(20, Some(u32::MAX)), (21, None)]);
        assert!(!is_dense(&map));
        // Ids built spread out start as a map.
        let spread =
            PointMap::from_entries((0..2000u64).map(|i| (RecordId(i * 1000), i as u32))).unwrap();
        assert!(!is_dense(&spread));
        agrees_with_a_hash_map(spread, &[(5, Some(1)), (1000, None)]);
        assert_eq!(PointMap::from_entries(std::iter::empty()).unwrap().len, 0);
        let twice = [(RecordId(5), 0), (RecordId(6), 1), (RecordId(5), 2)];
        assert_eq!(
            PointMap::from_entries(twice.into_iter()).unwrap_err(),
            RecordId(5)
        );
    }
}
