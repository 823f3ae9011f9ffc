//! A namespace's vector collections as one file, written when the engine closes and read when
//! the namespace is next searched, instead of decoding every stored vector from RocksDB (most
//! of a reopened 100k-record namespace's first answer).
//!
//! The file is a cache of the store, never a source of truth, so it is used only when exact:
//! its header names the store's sequence number at writing, and the reader is given the
//! number it must match (see `crate::snapshot`). Its parts, all little-endian:
//! - the header: [`MAGIC`], the sequence number, the number of spaces;
//! - per space: its name (length, bytes), the dimension, the number of vectors, their record
//!   ids, then the vectors in the same order;
//! - a CRC-32 of everything before it.
//!
//! A file is written beside its final name, synced and renamed, so a crash leaves the old
//! file or the new one. Every count read is checked against the bytes left before anything
//! is allocated; a file that is short, long, or fails its checksum is refused with an error.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use super::collection::VectorCollection;
use crate::error::{Error, Result};
use crate::record::RecordId;

/// The first bytes of a vector file (its format version is the last two).
const MAGIC: &[u8; 8] = b"MBVECS01";

/// Longest space name accepted when reading.
const MAX_NAME: u64 = 4096;

/// Largest dimension accepted when reading.
const MAX_DIM: u64 = 65_536;

/// Bytes converted at a time while reading vectors.
const CHUNK: usize = 1 << 20;

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
        out.put(&seq.to_le_bytes())?;
        out.put(&(collections.len() as u64).to_le_bytes())?;
        for (space, collection) in collections {
            let (dim, ids, data) = collection.parts();
            out.put(&(space.len() as u64).to_le_bytes())?;
            out.put(space.as_bytes())?;
            out.put(&(dim as u64).to_le_bytes())?;
            out.put(&(ids.len() as u64).to_le_bytes())?;
            for id in ids {
                out.put(&id.0.to_le_bytes())?;
            }
            for chunk in data.chunks(CHUNK / 4) {
                out.put(&le_bytes(chunk))?;
            }
        }
        let crc = out.hasher.clone().finalize();
        out.inner.write_all(&crc.to_le_bytes())?;
        out.inner
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()
    })();
    written.map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// The collections stored in `path` if it was written at sequence number `seq`; `None` when it
/// was written at another one.
pub(crate) fn read(path: &Path, seq: u64) -> Result<Option<HashMap<String, VectorCollection>>> {
    let corrupt = |detail: String| Error::Corrupt {
        what: "vector file",
        detail: format!("{}: {detail}", path.display()),
    };
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let mut input = Reader {
        inner: BufReader::with_capacity(CHUNK, file),
        hasher: crc32fast::Hasher::new(),
        left: size
            .checked_sub(4)
            .ok_or_else(|| corrupt("too short".into()))?,
    };
    let io = |e: std::io::Error| Error::io(path, e);
    let mut magic = [0u8; 8];
    input.take(&mut magic).map_err(io)?;
    if &magic != MAGIC {
        return Err(corrupt("not a vector file of this format".into()));
    }
    if input.u64().map_err(io)? != seq {
        return Ok(None);
    }
    let spaces = input.u64().map_err(io)?;
    let mut collections = HashMap::new();
    for _ in 0..spaces {
        let name_len = input.u64().map_err(io)?;
        if name_len > MAX_NAME.min(input.left) {
            return Err(corrupt(format!("space name of {name_len} bytes")));
        }
        let mut name = vec![0u8; name_len as usize];
        input.take(&mut name).map_err(io)?;
        let name = String::from_utf8(name).map_err(|_| corrupt("space name not UTF-8".into()))?;
        let dim = input.u64().map_err(io)?;
        let count = input.u64().map_err(io)?;
        let fits = (1..=MAX_DIM).contains(&dim)
            && count
                .checked_mul(8 + 4 * dim)
                .is_some_and(|bytes| bytes <= input.left);
        if !fits {
            return Err(corrupt(format!("{count} vectors of {dim} in space {name}")));
        }
        let mut ids = Vec::with_capacity(count as usize);
        for _ in 0..count {
            ids.push(RecordId(input.u64().map_err(io)?));
        }
        let data = input.floats((count * dim) as usize).map_err(io)?;
        let collection = VectorCollection::from_parts(dim as usize, ids, data)
            .ok_or_else(|| corrupt(format!("space {name} repeats a record id")))?;
        collections.insert(name, collection);
    }
    if input.left != 0 {
        return Err(corrupt(format!(
            "{} bytes after the last space",
            input.left
        )));
    }
    let expected = input.hasher.finalize();
    let mut stored = [0u8; 4];
    input.inner.read_exact(&mut stored).map_err(io)?;
    if u32::from_le_bytes(stored) != expected {
        return Err(corrupt("checksum mismatch".into()));
    }
    Ok(Some(collections))
}

/// A writer that checksums what passes through it.
struct Checksummed<W> {
    inner: W,
    hasher: crc32fast::Hasher,
}

impl<W: Write> Checksummed<W> {
    fn new(inner: W) -> Self {
        Checksummed {
            inner,
            hasher: crc32fast::Hasher::new(),
        }
    }

    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.inner.write_all(bytes)
    }
}

/// A reader that checksums what it reads and never reads past the checksum (`left` bytes
/// remain before it).
struct Reader<R> {
    inner: R,
    hasher: crc32fast::Hasher,
    left: u64,
}

impl<R: Read> Reader<R> {
    fn take(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        if buf.len() as u64 > self.left {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file ends early",
            ));
        }
        self.inner.read_exact(buf)?;
        self.hasher.update(buf);
        self.left -= buf.len() as u64;
        Ok(())
    }

    fn u64(&mut self) -> std::io::Result<u64> {
        let mut bytes = [0u8; 8];
        self.take(&mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// `n` floats (the caller checked that the file holds them), read straight into place.
    fn floats(&mut self, n: usize) -> std::io::Result<Vec<f32>> {
        let mut out = vec![0f32; n];
        for chunk in out.chunks_mut(CHUNK / 4) {
            self.take(bytes_of_mut(chunk))?;
            from_le_in_place(chunk);
        }
        Ok(out)
    }
}

/// The little-endian bytes of `floats`: the floats' own memory on little-endian machines.
fn le_bytes(floats: &[f32]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: the slice's memory is `4 * len` initialised bytes, and u8 has no alignment.
        let bytes =
            unsafe { std::slice::from_raw_parts(floats.as_ptr().cast::<u8>(), floats.len() * 4) };
        std::borrow::Cow::Borrowed(bytes)
    } else {
        std::borrow::Cow::Owned(floats.iter().flat_map(|x| x.to_le_bytes()).collect())
    }
}

/// The memory of `floats` as bytes, to read into.
fn bytes_of_mut(floats: &mut [f32]) -> &mut [u8] {
    // SAFETY: the slice's memory is `4 * len` bytes, u8 has no alignment, and every bit
    // pattern is a valid f32, so whatever is read into it is a float.
    unsafe { std::slice::from_raw_parts_mut(floats.as_mut_ptr().cast::<u8>(), floats.len() * 4) }
}

/// Turns floats read as little-endian bytes into this machine's order (nothing to do on a
/// little-endian machine).
fn from_le_in_place(floats: &mut [f32]) {
    if cfg!(target_endian = "big") {
        for x in floats {
            *x = f32::from_bits(u32::from_le(x.to_bits()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::seeded_unit;

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
        assert!(read(&path, 41).unwrap().is_none(), "another number");
        let read = read(&path, 42).unwrap().unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read["a"].parts(), a.parts());
        assert_eq!(read["b"].parts(), b.parts());
        let query = seeded_unit(7, 8);
        assert_eq!(read["a"].exact_search(&query, 3), a.exact_search(&query, 3));
    }

    #[test]
    fn damaged_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.vec");
        write(&path, 5, &[("a", &collection(4, &[1, 2, 3]))]).unwrap();
        let good = std::fs::read(&path).unwrap();
        let flipped = {
            let mut bytes = good.clone();
            let last_float = bytes.len() - 6;
            bytes[last_float] ^= 1;
            bytes
        };
        let huge_count = {
            let mut bytes = good.clone();
            // The count of vectors follows magic, seq, spaces, name length, name, dim.
            let at = 8 + 8 + 8 + 8 + 1 + 8;
            bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
            bytes
        };
        for (what, bytes) in [
            ("flipped bit", flipped),
            ("huge count", huge_count),
            ("cut short", good[..good.len() - 9].to_vec()),
            ("trailing bytes", [good.clone(), vec![0; 8]].concat()),
            ("empty", Vec::new()),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            assert!(read(&path, 5).is_err(), "{what} was accepted");
        }
    }
}
