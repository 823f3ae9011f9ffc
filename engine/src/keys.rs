//! The on-disk key layout of every family of stored data.
//!
//! Integers are big-endian so that RocksDB's byte order is numeric order: records iterate in
//! insertion order within a namespace and the change log in sequence order.

use crate::record::RecordId;

/// What the engine stores, each kind in a key range of its own.
///
/// Vectors have a RocksDB column family of their own (1.5 KiB values that do not compress,
/// read in blocks of a few). The other kinds are small values with the same options, so they
/// share RocksDB's default family, each under a one-byte tag ([`Family::tag`]) in front of
/// its keys: RocksDB opens every column family at every open, and each one more cost about
/// 0.04 ms of a 100k store's 1.5 ms open (`docs/history.md`). Up to format 1 each kind had a
/// column family of its own (`crate::store` upgrades such a store on open).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// Engine metadata: format, counters, namespace and space catalog, counts.
    Meta,
    /// Records, keyed by namespace id then record id.
    Records,
    /// Normalized vectors, keyed by namespace id, record id, space name.
    Vectors,
    /// Index bookkeeping: the change log the derived indexes replay.
    Changelog,
    /// Free-form per-namespace state owned by memory systems.
    State,
    /// The attribute index (see `attributes.rs`), keyed by namespace id first.
    Attributes,
}

/// RocksDB's default column family: every family but the vectors', each under its tag.
pub(crate) const SHARED_COLUMN: &str = "default";
/// The vectors' column family.
pub(crate) const VECTORS_COLUMN: &str = "vectors";
/// Every column family the store has.
pub(crate) const COLUMNS: [&str; 2] = [SHARED_COLUMN, VECTORS_COLUMN];

impl Family {
    /// The column family holding this family's keys.
    pub(crate) fn column(self) -> &'static str {
        match self {
            Family::Vectors => VECTORS_COLUMN,
            _ => SHARED_COLUMN,
        }
    }

    /// The bytes in front of every key of this family in its column family: one distinct byte
    /// in the shared one, none in the vectors' own.
    pub(crate) fn tag(self) -> &'static [u8] {
        match self {
            Family::Meta => b"\x01",
            Family::Records => b"\x02",
            Family::Changelog => b"\x03",
            Family::State => b"\x04",
            Family::Attributes => b"\x05",
            Family::Vectors => b"",
        }
    }

    /// The family's name: the column family it had up to format 1 (before all but the
    /// vectors' shared one), and what a namespace digest hashes it as.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Family::Meta => "meta",
            Family::Records => "records",
            Family::Vectors => VECTORS_COLUMN,
            Family::Changelog => "changelog",
            Family::State => "state",
            Family::Attributes => "attributes",
        }
    }

    /// Every family.
    pub(crate) const ALL: [Family; 6] = [
        Family::Meta,
        Family::Records,
        Family::Vectors,
        Family::Changelog,
        Family::State,
        Family::Attributes,
    ];
}

pub(crate) const META_FORMAT: &[u8] = b"format";
pub(crate) const META_SEQ: &[u8] = b"seq";
pub(crate) const META_NEXT_RECORD: &[u8] = b"next_record";
pub(crate) const META_NEXT_NAMESPACE: &[u8] = b"next_namespace";
/// The last sequence number whose change-log entries were trimmed (the lexical index held them).
pub(crate) const META_CHANGELOG_TRIMMED: &[u8] = b"changelog_trimmed";
pub(crate) const META_NAMESPACE_PREFIX: &[u8] = b"ns/";
pub(crate) const META_SPACE_PREFIX: &[u8] = b"space/";
pub(crate) const META_COUNT_PREFIX: &[u8] = b"count/";
/// A namespace's BM25 statistics as of the last close (see `snapshot.rs`), by namespace id.
pub(crate) const META_STATS_PREFIX: &[u8] = b"stats/";
/// The store's sequence number when the statistics snapshots were written.
pub(crate) const META_STATS_SEQ: &[u8] = b"stats-seq";
/// Present once every stored record's attributes are in the attribute index.
pub(crate) const META_ATTRIBUTE_INDEX: &[u8] = b"attribute-index";
/// Namespaces whose copy is being written and not yet published (see `copy.rs`).
pub(crate) const META_STAGED_COPY_PREFIX: &[u8] = b"staged-copy/";

pub(crate) fn namespace_key(name: &str) -> Vec<u8> {
    [META_NAMESPACE_PREFIX, name.as_bytes()].concat()
}

pub(crate) fn space_key(name: &str) -> Vec<u8> {
    [META_SPACE_PREFIX, name.as_bytes()].concat()
}

pub(crate) fn count_key(ns: u32) -> Vec<u8> {
    [META_COUNT_PREFIX, &ns.to_be_bytes()[..]].concat()
}

pub(crate) fn stats_key(ns: u32) -> Vec<u8> {
    [META_STATS_PREFIX, &ns.to_be_bytes()[..]].concat()
}

/// The namespace id at the end of a META key that `prefix` starts ([`stats_key`],
/// [`staged_copy_key`]); `None` when the rest is not one.
pub(crate) fn namespace_after(prefix: &[u8], key: &[u8]) -> Option<u32> {
    key.get(prefix.len()..)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_be_bytes)
}

pub(crate) fn staged_copy_key(ns: u32) -> Vec<u8> {
    [META_STAGED_COPY_PREFIX, &ns.to_be_bytes()[..]].concat()
}

/// Prefix shared by every key of a namespace in the records, vectors and state families.
pub(crate) fn ns_prefix(ns: u32) -> [u8; 4] {
    ns.to_be_bytes()
}

/// The first key past every key of namespace `ns`.
pub(crate) fn ns_end(ns: u32) -> Vec<u8> {
    match ns.checked_add(1) {
        Some(next) => next.to_be_bytes().to_vec(),
        None => vec![0xff; 5],
    }
}

pub(crate) fn record_key(ns: u32, id: RecordId) -> [u8; 12] {
    let mut key = [0u8; 12];
    key[..4].copy_from_slice(&ns.to_be_bytes());
    key[4..].copy_from_slice(&id.0.to_be_bytes());
    key
}

/// Record id of a records-family or vectors-family key.
pub(crate) fn record_id_of(key: &[u8]) -> Option<RecordId> {
    let bytes: [u8; 8] = key.get(4..12)?.try_into().ok()?;
    Some(RecordId(u64::from_be_bytes(bytes)))
}

pub(crate) fn vector_key(ns: u32, id: RecordId, space: &str) -> Vec<u8> {
    [&record_key(ns, id)[..], space.as_bytes()].concat()
}

/// Every key record `id` of namespace `ns` can have a vector under, given the name of every
/// registered space (a vector is only stored in one, and spaces are never removed): what a
/// delete or update deletes point by point. One range delete per record would say the same,
/// but RocksDB keeps range tombstones apart and every later read of the family checks them
/// until a compaction; point deletes also write a filtered delete faster (docs/history.md).
pub(crate) fn vector_keys<'a>(
    ns: u32,
    id: RecordId,
    spaces: &'a [String],
) -> impl Iterator<Item = Vec<u8>> + 'a {
    spaces.iter().map(move |space| vector_key(ns, id, space))
}

/// Space name of a vectors-family key.
pub(crate) fn vector_space_of(key: &[u8]) -> Option<&str> {
    std::str::from_utf8(key.get(12..)?).ok()
}

/// Range of every vector of one record: `[record_key, record_key of id + 1)`.
pub(crate) fn vector_range(ns: u32, id: RecordId) -> ([u8; 12], [u8; 12]) {
    (record_key(ns, id), record_key(ns, RecordId(id.0 + 1)))
}

pub(crate) fn state_key(ns: u32, key: &str) -> Vec<u8> {
    [&ns.to_be_bytes()[..], key.as_bytes()].concat()
}

pub(crate) fn changelog_key(seq: u64) -> [u8; 8] {
    seq.to_be_bytes()
}

pub(crate) fn seq_of_changelog_key(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.try_into().ok()?))
}

pub(crate) fn encode_u64(v: u64) -> [u8; 8] {
    v.to_le_bytes()
}

pub(crate) fn decode_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

pub(crate) fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn decode_vector(bytes: &[u8]) -> Option<Vec<f32>> {
    let mut vector = Vec::with_capacity(bytes.len() / 4);
    decode_vector_into(bytes, &mut vector).then_some(vector)
}

/// Decodes a stored vector into `out` (cleared first), reusing its allocation; `false` when
/// the bytes are not whole floats.
pub(crate) fn decode_vector_into(bytes: &[u8], out: &mut Vec<f32>) -> bool {
    out.clear();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    out.extend(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    true
}

/// One entry of the vectors family: its record and space, with its vector decoded into `out`
/// (one buffer reused across a scan); `None` if the key or the value is malformed.
pub(crate) fn decode_vector_entry<'k>(
    key: &'k [u8],
    value: &[u8],
    out: &mut Vec<f32>,
) -> Option<(RecordId, &'k str)> {
    let id = record_id_of(key)?;
    let space = vector_space_of(key)?;
    decode_vector_into(value, out).then_some((id, space))
}

/// The first byte string after every string starting with `prefix`.
pub(crate) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0xff; prefix.len() + 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_keys_sort_numerically_and_parse_back() {
        let a = record_key(1, RecordId(255));
        let b = record_key(1, RecordId(256));
        assert!(a < b);
        assert!(b.as_slice() < ns_end(1).as_slice());
        assert_eq!(record_id_of(&b), Some(RecordId(256)));
        let v = vector_key(1, RecordId(7), "minilm");
        assert_eq!(vector_space_of(&v), Some("minilm"));
        let (lo, hi) = vector_range(1, RecordId(7));
        assert!(lo.as_slice() <= v.as_slice() && v.as_slice() < hi.as_slice());
    }

    #[test]
    fn families_sharing_a_column_have_distinct_tags() {
        for a in Family::ALL {
            for b in Family::ALL {
                if a != b && a.column() == b.column() {
                    assert!(!a.tag().is_empty() && a.tag() != b.tag(), "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn vectors_round_trip() {
        let v = vec![0.5f32, -1.25, 3.0];
        assert_eq!(decode_vector(&encode_vector(&v)), Some(v));
        assert_eq!(decode_vector(&[1, 2, 3]), None);
    }
}
