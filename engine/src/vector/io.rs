//! The two ends of a vector file ([`super::file`]): a writer that checksums and counts what
//! it writes, and a reader of a mapped file that checks every length against the bytes left.

use std::io::Write;
use std::sync::Arc;

use memmap2::Mmap;

use super::mapped::{le_bytes, Plain, Stored};

/// Bytes written at a time.
pub(super) const CHUNK: usize = 1 << 20;

/// A writer that checksums and counts what passes through it.
pub(super) struct Checksummed<W> {
    inner: W,
    hasher: crc32fast::Hasher,
    written: usize,
}

impl<W: Write> Checksummed<W> {
    pub(super) fn new(inner: W) -> Self {
        Checksummed {
            inner,
            hasher: crc32fast::Hasher::new(),
            written: 0,
        }
    }

    /// Writes the CRC-32 of everything written so far (not itself checksummed) and hands
    /// back the writer.
    pub(super) fn finish(mut self) -> std::io::Result<W> {
        let crc = self.hasher.clone().finalize();
        self.inner.write_all(&crc.to_le_bytes())?;
        Ok(self.inner)
    }

    pub(super) fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
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
}

impl<'a> Cursor<'a> {
    /// Reads `map`'s bytes `at..end`.
    pub(super) fn new(map: &'a Arc<Mmap>, at: usize, end: usize) -> Cursor<'a> {
        Cursor { map, at, end }
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
}
