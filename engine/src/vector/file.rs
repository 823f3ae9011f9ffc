//! A namespace's vector collections as one file, written when the engine closes and mapped
//! when the namespace is next searched, instead of decoding every stored vector from RocksDB
//! (most of a reopened namespace's first answer).
//!
//! The file is a cache of the store, never a source of truth, so it is used only when exact:
//! its header names the store's sequence number at writing, and the reader is given the
//! number it must match (see `crate::snapshot`). Its parts, all little-endian, each starting
//! at a multiple of 8 bytes (zeros pad the ends of names and vectors), so that the vectors
//! can be searched in place ([`super::arena`]):
//! - the header: [`MAGIC`], the sequence number, the number of spaces;
//! - per space: its name (length, bytes), the dimension, the number of vectors kept, their
//!   record ids, then the vectors in the same order, then its HNSW graph if it had one
//!   ([`super::graph_file`]), so that a reopened namespace searches its graph at once instead
//!   of scanning every vector until a new graph is built (minutes at a million). The vectors
//!   kept are those of the records that are no live point of the graph (all of them when
//!   there is none): the store has the others, and keeping them too made the engine's disk
//!   2.2× the raw text and vectors ([`super::source`]);
//! - a CRC-32 of everything before it but the graphs' codes, then one of the codes.
//!
//! A file is written beside its final name, synced and renamed, so a crash leaves the old
//! file or the new one, and a mapped file is never changed in place. Every count read is
//! checked against the bytes left before anything is allocated; a file that is short, long,
//! or fails its first checksum is refused with an error. Its codes are checked later, by the
//! collections that use them ([`super::codes_check`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use memmap2::{Mmap, MmapOptions};

use super::arena::Arena;
use super::codes_check::CodesCheck;
use super::collection::VectorCollection;
use super::graph::Graph;
use super::graph_file;
use super::io::{crc_outside, Checksummed, Cursor, CHUNK, TRAILER};
use super::mapped::Stored;
use super::source::VectorSource;
use crate::error::{Error, Result};
use crate::record::RecordId;

/// The first bytes of a vector file (its format version is the last two).
const MAGIC: &[u8; 8] = b"MBVECS05";

/// Bytes before the first space: magic, sequence number, number of spaces.
const HEADER: usize = 24;

/// Longest space name accepted when reading.
const MAX_NAME: u64 = 4096;

/// Largest dimension accepted when reading.
const MAX_DIM: u64 = 65_536;

/// Writes `collections` (space name, collection) to `path` as of sequence number `seq`.
pub(crate) fn write(
    path: &Path,
    seq: u64,
    collections: &[(&str, &VectorCollection)],
) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let mut out = Checksummed::new(BufWriter::with_capacity(CHUNK, file));
    let written = (|| -> std::io::Result<()> {
        out.put(MAGIC)?;
        out.u64(seq)?;
        out.u64(collections.len() as u64)?;
        for (space, collection) in collections {
            out.u64(space.len() as u64)?;
            out.put(space.as_bytes())?;
            out.pad()?;
            out.u64(collection.dim() as u64)?;
            // Deciding what is kept looks each record up in the graph: once, not per section.
            let kept: Vec<(RecordId, &[f32])> = collection.kept().collect();
            out.u64(kept.len() as u64)?;
            for (id, _) in &kept {
                out.u64(id.0)?;
            }
            for (_, vector) in &kept {
                out.values(vector)?;
            }
            out.pad()?;
            graph_file::write(&mut out, collection.graph())?;
        }
        out.finish()?
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()
    })();
    written.map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// Gives the store's vectors of a space, by its name: what a collection read back with a graph
/// scores the graph's points from, and loads into memory.
pub(crate) type SourceOf<'a> = &'a dyn Fn(&str) -> Arc<dyn VectorSource>;

/// A vector file read, checksummed (but for its codes) and parsed: all but the store's
/// vectors of its graphs' points, which [`Decoded::attach`] adds.
pub(crate) struct Decoded {
    spaces: Vec<DecodedSpace>,
    /// The check of the graphs' codes, if there is a graph.
    codes: Option<Arc<CodesCheck>>,
}

/// One space of a [`Decoded`] file: its collection, and its graph until it is attached.
struct DecodedSpace {
    name: String,
    collection: VectorCollection,
    graph: Option<Graph>,
}

impl Decoded {
    /// The collections by space, each graph given the store's vectors of its points.
    pub(crate) fn attach(self, source_of: SourceOf<'_>) -> HashMap<String, VectorCollection> {
        self.spaces
            .into_iter()
            .map(|mut space| {
                if let Some(graph) = space.graph {
                    space.collection.restore_graph(
                        graph,
                        source_of(&space.name),
                        self.codes.clone(),
                    );
                }
                (space.name, space.collection)
            })
            .collect()
    }
}

/// The collections in `path` if it was written at `seq`, as the snapshot reads them (the
/// tests' shorthand for [`decode`] and [`Decoded::attach`]).
#[cfg(test)]
pub(crate) fn read(
    path: &Path,
    seq: u64,
    source_of: SourceOf<'_>,
) -> Result<Option<HashMap<String, VectorCollection>>> {
    Ok(decode(path, seq)?.map(|decoded| decoded.attach(source_of)))
}

/// The file at `path` read, parsed and checked (but for its codes); `None` when it was
/// written at another sequence number than `seq`.
pub(crate) fn decode(path: &Path, seq: u64) -> Result<Option<Decoded>> {
    let corrupt = |detail: String| corrupt(path, detail);
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut header = [0u8; 16];
    match file.read_exact(&mut header) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(corrupt("too short".into()))
        }
        read => read.map_err(|e| Error::io(path, e))?,
    }
    if &header[..8] != MAGIC {
        return Err(corrupt("not a vector file of this format".into()));
    }
    let mut written_at = [0u8; 8];
    written_at.copy_from_slice(&header[8..]);
    let written_at = u64::from_le_bytes(written_at);
    if written_at != seq {
        return Ok(None);
    }
    // SAFETY: the engine never truncates or rewrites a vector file in place (it writes a new
    // file and renames it, or unlinks it), so the mapped bytes do not change under the map;
    // they are only read, through slices the checks below bound (see `super::arena`).
    // Not `populate`: mapping every page now (2.1–6.6 ms for the 45 MB of a 100k file) was
    // the longest part of the decode a reopened namespace's first vector search waits for,
    // and most of those pages are the graph's codes, of which a search reads a few thousand
    // and the codes' check (the first background job) reads all, on the other core. The parse
    // faults in what it reads (docs/history.md, reopen_probe: open + first vector answer
    // 7.30 → 7.12 and 9.23 → 7.51 ms, medians of 30 and 45).
    let map = unsafe { MmapOptions::new().map(&file) }.map_err(|e| Error::io(path, e))?;
    let Some(body_len) = map.len().checked_sub(TRAILER).filter(|n| *n >= HEADER) else {
        return Err(corrupt("too short".into()));
    };
    let stored = |at: usize| {
        let mut crc = [0u8; 4];
        crc.copy_from_slice(&map[at..at + 4]);
        u32::from_le_bytes(crc)
    };
    let (rest_crc, codes_crc) = (stored(body_len), stored(body_len + 4));
    let map = Arc::new(map);
    // The parse checks every count and bound itself, so it comes first: it finds the codes,
    // which the checksum of the rest leaves out.
    let (spaces, codes) = parse(path, &map, body_len)?;
    if crc_outside(&map, &codes, body_len) != rest_crc {
        return Err(corrupt("checksum mismatch".into()));
    }
    let codes = (!codes.is_empty()).then(|| {
        Arc::new(CodesCheck::new(
            Arc::clone(&map),
            codes,
            codes_crc,
            path.into(),
        ))
    });
    Ok(Some(Decoded { spaces, codes }))
}

/// The spaces of a mapped vector file whose body (all but the checksums) is `body_len` bytes
/// and whose header has been read, and where their graphs' codes lie.
fn parse(
    path: &Path,
    map: &Arc<Mmap>,
    body_len: usize,
) -> Result<(Vec<DecodedSpace>, Vec<Range<usize>>)> {
    let corrupt = |detail: String| corrupt(path, detail);
    let mut cursor = Cursor::new(map, 16, body_len);
    let input = &mut cursor;
    let spaces = input.u64().ok_or_else(|| corrupt("too short".into()))?;
    let mut decoded: Vec<DecodedSpace> = Vec::new();
    for _ in 0..spaces {
        let name_len = input.u64().ok_or_else(|| corrupt("too short".into()))?;
        if name_len > MAX_NAME.min(input.left()) {
            return Err(corrupt(format!("space name of {name_len} bytes")));
        }
        let name = input
            .bytes(name_len as usize)
            .and_then(|bytes| String::from_utf8(bytes.to_vec()).ok())
            .ok_or_else(|| corrupt("space name not UTF-8".into()))?;
        if decoded.iter().any(|space| space.name == name) {
            return Err(corrupt(format!("space {name} twice")));
        }
        let (Some(()), Some(dim), Some(count)) = (input.pad(), input.u64(), input.u64()) else {
            return Err(corrupt(format!("space {name} cut short")));
        };
        if !(1..=MAX_DIM).contains(&dim) || !input.fits(count, 8 + 4 * dim) {
            return Err(corrupt(format!("{count} vectors of {dim} in space {name}")));
        }
        let ids = (0..count)
            .map(|_| input.u64().map(RecordId))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| corrupt(format!("space {name} cut short")))?;
        let data = match input.values::<f32>((count * dim) as usize) {
            Some(Stored::Mapped(mapped)) => Arena::mapped(mapped),
            Some(Stored::Owned(floats)) => Arena::from_vec(floats),
            None => return Err(corrupt(format!("space {name} cut short"))),
        };
        let collection = VectorCollection::from_parts(dim as usize, ids, data)
            .ok_or_else(|| corrupt(format!("space {name} repeats a record id")))?;
        let kept = collection.kept().map(|(id, _)| id);
        let graph = graph_file::read(input, dim as usize, kept)
            .map_err(|detail| corrupt(format!("graph of space {name}: {detail}")))?;
        decoded.push(DecodedSpace {
            name,
            collection,
            graph,
        });
    }
    if input.left() != 0 {
        return Err(corrupt(format!(
            "{} bytes after the last space",
            input.left()
        )));
    }
    Ok((decoded, cursor.code_ranges()))
}

/// Where the codes of the (sound) vector file at `path` lie.
#[cfg(test)]
pub(crate) fn code_ranges(path: &Path) -> Vec<Range<usize>> {
    let file = File::open(path).unwrap();
    // SAFETY: a test's file, not changed while mapped.
    let map = Arc::new(unsafe { Mmap::map(&file) }.unwrap());
    parse(path, &map, map.len() - TRAILER).unwrap().1
}

/// `damaged`, a copy of the sound vector file at `path` changed outside its codes, with its
/// first checksum made to match again: a test of the parse's own checks.
#[cfg(test)]
pub(crate) fn resealed(path: &Path, mut damaged: Vec<u8>) -> Vec<u8> {
    let body = damaged.len() - TRAILER;
    let crc = crc_outside(&damaged, &code_ranges(path), body);
    damaged[body..body + 4].copy_from_slice(&crc.to_le_bytes());
    damaged
}

/// The error of a vector file that is not what it should be.
fn corrupt(path: &Path, detail: String) -> Error {
    Error::Corrupt {
        what: "vector file",
        detail: format!("{}: {detail}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::seeded_unit;
    use crate::vector::source::MemorySource;

    fn collection(dim: usize, ids: &[u64]) -> VectorCollection {
        let mut c = VectorCollection::new(dim);
        for &id in ids {
            c.upsert(RecordId(id), &seeded_unit(id, dim));
        }
        c
    }

    #[test]
    fn collections_come_back_as_written_at_their_sequence_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        let mut a = collection(8, &[3, 1, 7, 9]);
        a.remove(RecordId(1));
        let b = collection(3, &[]);
        write(&path, 42, &[("a", &a), ("b", &b)]).unwrap();
        assert!(
            read(&path, 41, &MemorySource::none).unwrap().is_none(),
            "another number"
        );
        let read = read(&path, 42, &MemorySource::none).unwrap().unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read["a"].contents(), a.contents());
        assert_eq!(read["b"].contents(), b.contents());
        let query = seeded_unit(7, 8);
        assert_eq!(read["a"].exact_search(&query, 3), a.exact_search(&query, 3));
    }

    #[test]
    fn mapped_vectors_take_changes_in_memory_and_outlive_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        // 3 vectors of 3 floats: 36 bytes, so the next space starts after padding.
        let odd = collection(3, &[1, 2, 3]);
        let next = collection(5, &[4]);
        write(&path, 1, &[("odd", &odd), ("next", &next)]).unwrap();
        let mut spaces = read(&path, 1, &MemorySource::none).unwrap().unwrap();
        assert!(spaces["odd"].is_mapped() && spaces["next"].is_mapped());
        // Replaced, then deleted, while mapped: what was read stays as it was.
        write(&path, 2, &[("odd", &collection(3, &[9]))]).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(spaces["next"].contents(), next.contents());
        let mut changed = spaces.remove("odd").unwrap();
        assert_eq!(changed.contents(), odd.contents());
        let mut expected = odd;
        for c in [&mut changed, &mut expected] {
            c.upsert(RecordId(5), &seeded_unit(5, 3));
            c.upsert(RecordId(2), &seeded_unit(22, 3));
        }
        assert!(
            changed.is_mapped(),
            "added and changed vectors go after the mapped ones"
        );
        let query = seeded_unit(22, 3);
        assert_eq!(
            changed.exact_search(&query, 4),
            expected.exact_search(&query, 4)
        );
        // The same records, in another order: an update left a hole and appended.
        assert_eq!(changed.by_id(), expected.by_id());
        // Written and read back, holes left out.
        write(&path, 3, &[("odd", &changed)]).unwrap();
        assert_eq!(
            read(&path, 3, &MemorySource::none).unwrap().unwrap()["odd"].contents(),
            changed.contents()
        );
        for c in [&mut changed, &mut expected] {
            c.remove(RecordId(1));
        }
        assert!(
            !changed.is_mapped(),
            "compacted into memory once holes are a quarter of the slots"
        );
        assert_eq!(changed.by_id(), expected.by_id());
        assert_eq!(
            changed.exact_search(&query, 4),
            expected.exact_search(&query, 4)
        );
    }

    #[test]
    fn damaged_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        write(&path, 5, &[("a", &collection(4, &[1, 2, 3]))]).unwrap();
        let good = std::fs::read(&path).unwrap();
        let flipped = {
            let mut bytes = good.clone();
            let last_float = bytes.len() - TRAILER - 2;
            bytes[last_float] ^= 1;
            bytes
        };
        // A space written twice: refused, not one of the two kept.
        let a = collection(4, &[1, 2, 3]);
        write(&path, 5, &[("a", &a), ("a", &a)]).unwrap();
        assert!(
            read(&path, 5, &MemorySource::none).is_err(),
            "a space twice"
        );
        // A count changed and the checksum made to match: refused by the bounds, before
        // anything is allocated.
        std::fs::write(&path, &good).unwrap();
        let with_count = |at: usize, count: u64| {
            let mut bytes = good.clone();
            bytes[at..at + 8].copy_from_slice(&count.to_le_bytes());
            resealed(&path, bytes)
        };
        // The count of vectors follows magic, seq, spaces, name length, name (padded to 8
        // bytes), dim.
        let huge_count = with_count(8 + 8 + 8 + 8 + 8 + 8, u64::MAX);
        let huge_name = with_count(8 + 8 + 8, 1 << 40);
        let extra_space = with_count(8 + 8, 2);
        for (what, bytes) in [
            ("flipped bit", flipped),
            ("huge count", huge_count),
            ("huge name", huge_name),
            ("a space more than written", extra_space),
            ("cut short", good[..good.len() - 9].to_vec()),
            ("trailing bytes", [good.clone(), vec![0; 8]].concat()),
            ("empty", Vec::new()),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            assert!(
                read(&path, 5, &MemorySource::none).is_err(),
                "{what} was accepted"
            );
        }
    }
}
