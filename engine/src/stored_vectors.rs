//! The store as the [`VectorSource`] of a namespace's collection in one space.
//!
//! It holds the store weakly: a load in the background must not keep a closing engine's
//! RocksDB open (and its directory locked) after the engine is gone. `Engine::close` waits
//! for loads in flight.

use std::sync::{Arc, Weak};

use crate::error::{Error, Result};
use crate::keys::{
    decode_vector, decode_vector_entry, ns_end, vector_key, vector_space_of, Family,
};
use crate::record::RecordId;
use crate::store::{Caching, Store};
use crate::vector::source::VectorSource;

/// The vectors of namespace `ns` in space `space`, read from the store.
pub(crate) struct StoredVectors {
    store: Weak<Store>,
    ns: u32,
    space: String,
}

impl StoredVectors {
    /// The vectors of `ns` in `space` in `store`.
    pub(crate) fn new(store: &Arc<Store>, ns: u32, space: &str) -> StoredVectors {
        StoredVectors {
            store: Arc::downgrade(store),
            ns,
            space: space.to_string(),
        }
    }

    fn store(&self) -> Result<Arc<Store>> {
        self.store
            .upgrade()
            .ok_or_else(|| Error::Background("the engine closed while reading vectors".into()))
    }

    fn corrupt(&self, key: &[u8]) -> Error {
        Error::Corrupt {
            what: "vector",
            detail: format!("namespace {} space {}: key {key:?}", self.ns, self.space),
        }
    }
}

impl VectorSource for StoredVectors {
    fn get(&self, ids: &[RecordId]) -> Result<Vec<Option<Vec<f32>>>> {
        let store = self.store()?;
        let keys: Vec<Vec<u8>> = ids
            .iter()
            .map(|id| vector_key(self.ns, *id, &self.space))
            .collect();
        let mut out = Vec::with_capacity(ids.len());
        let mut at = 0;
        store.get_sorted(Family::Vectors, &keys, Caching::Fill, |value| {
            let vector = match value {
                Some(bytes) => Some(decode_vector(bytes).ok_or_else(|| self.corrupt(&keys[at]))?),
                None => None,
            };
            at += 1;
            out.push(vector);
            Ok(())
        })?;
        Ok(out)
    }

    fn next_batch(&self, after: Option<RecordId>, max: usize) -> Result<(Vec<RecordId>, Vec<f32>)> {
        let store = self.store()?;
        let start = match after {
            Some(id) => match id.0.checked_add(1) {
                Some(next) => vector_key(self.ns, RecordId(next), ""),
                None => return Ok((Vec::new(), Vec::new())),
            },
            None => vector_key(self.ns, RecordId(0), ""),
        };
        let (mut ids, mut data) = (Vec::new(), Vec::new());
        let mut vector = Vec::new();
        store.visit_range(Family::Vectors, &start, &ns_end(self.ns), |key, value| {
            // Other spaces' vectors are skipped before they are decoded.
            if vector_space_of(key) != Some(self.space.as_str()) {
                return Ok(true);
            }
            let (id, _) =
                decode_vector_entry(key, value, &mut vector).ok_or_else(|| self.corrupt(key))?;
            ids.push(id);
            data.extend_from_slice(&vector);
            Ok(ids.len() < max)
        })?;
        Ok((ids, data))
    }
}

#[cfg(test)]
mod tests {
    use crate::store::StoreBatch;

    use super::*;
    use crate::keys::encode_vector;

    #[test]
    fn batches_and_lookups_stay_in_their_namespace_and_space() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path(), false).unwrap());
        let vector = |id: u64, space: u8| vec![id as f32, f32::from(space)];
        let mut batch = StoreBatch::default();
        let cf = store.cf(Family::Vectors).unwrap();
        for ns in [1u32, 2] {
            for id in 0..10u64 {
                // Space "b" sorts after "a" under every record; record 4 has no "a".
                for (space, name) in [(0u8, "a"), (1, "b")] {
                    if !(name == "a" && id == 4) {
                        batch.put(
                            cf,
                            vector_key(ns, RecordId(id), name),
                            encode_vector(&vector(id + 100 * u64::from(ns), space)),
                        );
                    }
                }
            }
        }
        store.write(batch).unwrap();
        let source = StoredVectors::new(&store, 1, "a");
        let mut after = None;
        let mut seen = Vec::new();
        loop {
            let (ids, data) = source.next_batch(after, 4).unwrap();
            let Some(last) = ids.last() else { break };
            assert!(ids.len() <= 4);
            for (id, v) in ids.iter().zip(data.chunks(2)) {
                assert_eq!(v, vector(id.0 + 100, 0), "namespace 1, space a");
            }
            after = Some(*last);
            seen.extend(ids);
        }
        let expected: Vec<RecordId> = (0..10).filter(|i| *i != 4).map(RecordId).collect();
        assert_eq!(seen, expected);
        let got = source
            .get(&[RecordId(3), RecordId(4), RecordId(9)])
            .unwrap();
        assert_eq!(got, vec![Some(vector(103, 0)), None, Some(vector(109, 0))]);
        drop(store);
        assert!(source.get(&[RecordId(3)]).is_err(), "the store is gone");
    }
}
