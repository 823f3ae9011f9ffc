//! Memory ids as the tools show them: opaque. Engine record ids count up across the whole store,
//! so a tenant reading its own ids could tell how much every tenant writes (and in what order).
//! The tools show each record id put through a keyed permutation of 64-bit numbers (a four-round
//! Feistel network whose round function is SHA-256 of the store's secret key, the round and the
//! half): as unique as record ids, turned back only with the key, and saying nothing about order
//! or volume. Each tenant has its own key, drawn once from the operating system and kept in a
//! namespace of the tenant's (`<memory root>/ids`), so that it moves with the tenant's export
//! and a moved tenant's ids stay what they were.

use mb_engine::{Engine, NamespaceOptions, RecordId};
use sha2::{Digest, Sha256};

use crate::error::McpError;

/// The state key of the memory-id key.
const KEY_STATE: &str = "memory_id_key";
/// Rounds of the Feistel network.
const ROUNDS: u8 = 4;

/// A tenant's permutation of record ids.
#[derive(Clone)]
pub struct MemoryIds {
    key: [u8; 32],
}

impl MemoryIds {
    /// The permutation whose key namespace `namespace` of `engine` keeps (drawn on first use).
    pub fn open(engine: &Engine, namespace: &str) -> Result<MemoryIds, McpError> {
        engine.ensure_namespace(namespace, NamespaceOptions::default())?;
        let kept: Option<Vec<u8>> = engine.get_state(namespace, KEY_STATE)?;
        let key = match kept {
            Some(bytes) => <[u8; 32]>::try_from(bytes.as_slice())
                .map_err(|_| McpError::Config(format!("the store's {KEY_STATE} is damaged")))?,
            None => {
                let mut key = [0u8; 32];
                use std::io::Read;
                std::fs::File::open("/dev/urandom")
                    .and_then(|mut random| random.read_exact(&mut key))
                    .map_err(|e| McpError::Io(format!("drawing the memory-id key: {e}")))?;
                engine.put_state(namespace, KEY_STATE, &key.to_vec())?;
                key
            }
        };
        Ok(MemoryIds { key })
    }

    /// The id the tools show for record `id`.
    pub fn shown(&self, id: RecordId) -> u64 {
        let (mut left, mut right) = ((id.0 >> 32) as u32, id.0 as u32);
        for round in 0..ROUNDS {
            (left, right) = (right, left ^ self.mix(round, right));
        }
        (u64::from(left) << 32) | u64::from(right)
    }

    /// The record a shown id names.
    pub fn record(&self, shown: u64) -> RecordId {
        let (mut left, mut right) = ((shown >> 32) as u32, shown as u32);
        for round in (0..ROUNDS).rev() {
            (left, right) = (right ^ self.mix(round, left), left);
        }
        RecordId((u64::from(left) << 32) | u64::from(right))
    }

    /// The round function.
    fn mix(&self, round: u8, half: u32) -> u32 {
        let digest = Sha256::new()
            .chain_update(self.key)
            .chain_update([round])
            .chain_update(half.to_le_bytes())
            .finalize();
        u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_ids_are_a_keyed_permutation_that_hides_order() {
        let ids = MemoryIds { key: [7; 32] };
        let other = MemoryIds { key: [8; 32] };
        let shown: Vec<u64> = (1..=1000).map(|n| ids.shown(RecordId(n))).collect();
        for (n, &s) in (1..=1000).zip(&shown) {
            assert_eq!(ids.record(s), RecordId(n));
            assert_ne!(other.shown(RecordId(n)), s);
        }
        let mut unique = shown.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 1000);
        // Consecutive records are not near each other, nor in order.
        let near = shown
            .windows(2)
            .filter(|w| w[0].abs_diff(w[1]) < 1 << 40)
            .count();
        assert!(near < 5, "{near}");
        let rising = shown.windows(2).filter(|w| w[1] > w[0]).count();
        assert!((350..650).contains(&rising), "{rising}");
        for edge in [0, u64::MAX, 1 << 32] {
            assert_eq!(ids.record(ids.shown(RecordId(edge))), RecordId(edge));
        }
    }

    #[test]
    fn a_store_keeps_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), Default::default()).unwrap();
        let first = MemoryIds::open(&engine, "t/ids")
            .unwrap()
            .shown(RecordId(42));
        assert_eq!(
            MemoryIds::open(&engine, "t/ids")
                .unwrap()
                .shown(RecordId(42)),
            first
        );
        assert_ne!(
            MemoryIds::open(&engine, "u/ids")
                .unwrap()
                .shown(RecordId(42)),
            first
        );
        drop(engine);
        let engine = Engine::open(dir.path(), Default::default()).unwrap();
        assert_eq!(
            MemoryIds::open(&engine, "t/ids")
                .unwrap()
                .shown(RecordId(42)),
            first
        );
    }
}
