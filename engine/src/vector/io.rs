//! The two ends of a vector file ([`super::file`]): a writer that checksums and counts what
//! it writes, and a reader of a mapped file that checks every length against the bytes left.
//!
//! A file has two checksums: one of its graphs' codes, checked in the background after the
//! file is in use ([`super::codes_check`]), and one of everything else, checked before.

use std::io::Write;
use std::ops::Range;
use std::sync::Arc;

use memmap2::Mmap;

use super::mapped::{le_bytes, Plain, Stored};

/// Bytes written at a time.
pub(super) const CHUNK: usize = 1 << 20;

/// Bytes after a file's body: the CRC-32 of everything but the codes, then that of the codes.
pub(super) const TRAILER: usize = 8;

/// A writer that checksums and counts what passes through it.
pub(super) struct Checksummed<W> {
    inner: W,
    /// The checksum of every byte but the codes.
    rest: crc32fast::Hasher,
    /// The checksum of the codes, in the order written.
    codes: crc32fast::Hasher,
    written: usize,
}

impl<W: Write> Checksummed<W> {
    pub(super) fn new(inner: W) -> Self {
        Checksummed {
            inner,
            rest: crc32fast::Hasher::new(),
            codes: crc32fast::Hasher::new(),
            written: 0,
        }
    }

    /// Writes the [`TRAILER`] (not itself checksummed) and hands back the writer.
    pub(super) fn finish(mut self) -> std::io::Result<W> {
        let rest = self.rest.clone().finalize();
        let codes = self.codes.clone().finalize();
        self.inner.write_all(&rest.to_le_bytes())?;
        self.inner.write_all(&codes.to_le_bytes())?;
        Ok(self.inner)
    }

    pub(super) fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.rest.update(bytes);
        self.emit(bytes)
    }

    /// A graph's codes, under the codes' checksum, then the zeros up to the next multiple of
    /// 8 bytes (under the other, as every padding).
    pub(super) fn codes(&mut self, codes: &[i8]) -> std::io::Result<()> {
        for chunk in codes.chunks(CHUNK) {
            let bytes = le_bytes(chunk);
            self.codes.update(&bytes);
            self.emit(&bytes)?;
        }
        self.pad()
    }

    /// Writes and counts `bytes` that a checksum has taken.
    fn emit(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.written += bytes.len();
        self.inner.write_all(bytes)
    }

    /// Zeros up to the next multiple of 8 bytes.
    pub(super) fn pad(&mut self) -> std::io::Result<()> {
        let zeros = [0u8; 8];
        self.put(&zeros[..self.written.next_multiple_of(8) - self.written])
    }

    pub(super) fn u64(&mut self, value: u64) -> std::io::Result<()> {
        self.put(&value.to_le_bytes())
    }

    /// `values`, little-endian, a megabyte at a time.
    pub(super) fn values<T: Plain>(&mut self, values: &[T]) -> std::io::Result<()> {
        for chunk in values.chunks(CHUNK / std::mem::size_of::<T>()) {
            self.put(&le_bytes(chunk))?;
        }
        Ok(())
    }
}

/// Reads a mapped file's bytes `at..end` front to back; `None` once they run out.
pub(super) struct Cursor<'a> {
    map: &'a Arc<Mmap>,
    at: usize,
    end: usize,
    /// Where the codes read so far lie, in file order (without their padding).
    codes: Vec<Range<usize>>,
}

impl<'a> Cursor<'a> {
    /// Reads `map`'s bytes `at..end`.
    pub(super) fn new(map: &'a Arc<Mmap>, at: usize, end: usize) -> Cursor<'a> {
        Cursor {
            map,
            at,
            end,
            codes: Vec::new(),
        }
    }

    /// Where the codes read lie, in file order.
    pub(super) fn code_ranges(self) -> Vec<Range<usize>> {
        self.codes
    }

    pub(super) fn left(&self) -> u64 {
        (self.end - self.at) as u64
    }

    /// Whether `count` items of `size` bytes each fit in the bytes left: checked before
    /// anything is allocated for a count read from the file.
    pub(super) fn fits(&self, count: u64, size: u64) -> bool {
        count
            .checked_mul(size)
            .is_some_and(|bytes| bytes <= self.left())
    }

    pub(super) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.end)?;
        let bytes = &self.map[self.at..end];
        self.at = end;
        Some(bytes)
    }

    pub(super) fn u64(&mut self) -> Option<u64> {
        let bytes = self.bytes(8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// Skips the zeros up to the next multiple of 8 bytes.
    pub(super) fn pad(&mut self) -> Option<()> {
        let n = self.at.next_multiple_of(8) - self.at;
        self.bytes(n).map(|_| ())
    }

    /// `n` values at the cursor, then the zeros up to the next multiple of 8 bytes: viewed
    /// in place where the machine allows, else decoded.
    pub(super) fn values<T: Plain>(&mut self, n: usize) -> Option<Stored<T>> {
        let start = self.at;
        self.bytes(n.checked_mul(std::mem::size_of::<T>())?)?;
        self.pad()?;
        Stored::read(self.map, start, n)
    }

    /// `n` codes written by [`Checksummed::codes`], as [`Cursor::values`] reads values, their
    /// place noted for the codes' checksum.
    pub(super) fn codes(&mut self, n: usize) -> Option<Stored<i8>> {
        let start = self.at;
        let codes = self.values(n)?;
        self.codes.push(start..start + n);
        Some(codes)
    }
}

/// The CRC-32 of `map`'s bytes in `ranges` (in order, not overlapping). Ranges come from a
/// [`Cursor`], so they are inside the map; one that were not would be left out, and the
/// checksum fail.
pub(super) fn crc_inside(map: &[u8], ranges: &[Range<usize>]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    for r in ranges {
        hasher.update(map.get(r.clone()).unwrap_or_default());
    }
    hasher.finalize()
}

/// The CRC-32 of `map`'s bytes `..end` outside `ranges` (as for [`crc_inside`]).
pub(super) fn crc_outside(map: &[u8], ranges: &[Range<usize>], end: usize) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    let mut at = 0;
    for r in ranges {
        hasher.update(map.get(at..r.start).unwrap_or_default());
        at = r.end;
    }
    hasher.update(map.get(at..end).unwrap_or_default());
    hasher.finalize()
}
