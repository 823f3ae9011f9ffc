//! Arrays of plain numbers read in place from a mapped vector file, or held in memory.
//!
//! A reopened namespace searches its vector file's pages where they are: the vectors
//! ([`super::arena`]), and the graph's codes and links ([`super::graph`]). Mapping costs no
//! copy and no fresh memory, where copying gigabytes into new allocations was most of a
//! reopen. The parts of a file are 8-byte aligned, so any of these types can be viewed in
//! place on a little-endian machine; elsewhere they are decoded into memory.
//!
//! Mapping is sound only while nobody truncates or rewrites the file in place. The engine
//! never does: a vector file is replaced by writing a new file and renaming it over the old
//! one, and deleted by unlinking it, and either leaves a mapped file's pages as they were.

use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;

use memmap2::Mmap;

/// A number type a vector file stores little-endian, and for which every bit pattern of its
/// size is a valid value (so mapped bytes can be viewed as it).
pub(crate) trait Plain: Copy + Send + Sync + 'static {
    /// Decodes one value from its little-endian bytes (`size_of::<Self>()` of them).
    fn from_le(bytes: &[u8]) -> Self;
    /// Appends the value's little-endian bytes to `out`.
    fn put_le(self, out: &mut Vec<u8>);
}

impl Plain for f32 {
    fn from_le(bytes: &[u8]) -> Self {
        f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Plain for u32 {
    fn from_le(bytes: &[u8]) -> Self {
        u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Plain for u64 {
    fn from_le(bytes: &[u8]) -> Self {
        let mut le = [0u8; 8];
        le.copy_from_slice(&bytes[..8]);
        u64::from_le_bytes(le)
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Plain for i8 {
    fn from_le(bytes: &[u8]) -> Self {
        bytes[0] as i8
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
}

/// `len` values of `T` at byte `start` of a mapped file.
pub(crate) struct Mapped<T> {
    map: Arc<Mmap>,
    start: usize,
    len: usize,
    values: PhantomData<T>,
}

// Derived `Clone` would ask `T: Clone` of the marker; the map is what is shared.
impl<T> Clone for Mapped<T> {
    fn clone(&self) -> Self {
        Mapped {
            map: Arc::clone(&self.map),
            start: self.start,
            len: self.len,
            values: PhantomData,
        }
    }
}

impl<T: Plain> Mapped<T> {
    /// The `len` values at byte `start` of `map`; `None` unless they lie inside it, start
    /// aligned for `T`, and this machine stores numbers little-endian, as the file does.
    pub(crate) fn new(map: Arc<Mmap>, start: usize, len: usize) -> Option<Mapped<T>> {
        let end = len
            .checked_mul(std::mem::size_of::<T>())
            .and_then(|bytes| start.checked_add(bytes))?;
        let aligned = (map.as_ptr() as usize).checked_add(start)? % std::mem::align_of::<T>();
        (cfg!(target_endian = "little") && end <= map.len() && aligned == 0).then_some(Mapped {
            map,
            start,
            len,
            values: PhantomData,
        })
    }

    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The values.
    pub(crate) fn as_slice(&self) -> &[T] {
        // SAFETY: `new` checked that the `len * size_of::<T>()` bytes at `start` lie inside
        // the map and are aligned for `T`; every bit pattern is a valid `T` (`Plain`); the map
        // is read-only and lives as long as `self` (the `Arc`); the engine never changes a
        // mapped file in place (module documentation).
        unsafe {
            std::slice::from_raw_parts(self.map.as_ptr().add(self.start).cast::<T>(), self.len)
        }
    }
}

/// An immutable array of values, mapped from a file or held in memory.
#[derive(Clone)]
pub(crate) enum Stored<T> {
    Owned(Vec<T>),
    Mapped(Mapped<T>),
}

impl<T: Plain> Stored<T> {
    /// The `len` values at byte `start` of `map`: viewed in place where the machine allows,
    /// else decoded. `None` if they do not lie inside the map.
    pub(crate) fn read(map: &Arc<Mmap>, start: usize, len: usize) -> Option<Stored<T>> {
        let size = std::mem::size_of::<T>();
        let bytes = map.get(start..start.checked_add(len.checked_mul(size)?)?)?;
        Some(match Mapped::new(Arc::clone(map), start, len) {
            Some(mapped) => Stored::Mapped(mapped),
            None => Stored::Owned(bytes.chunks_exact(size).map(T::from_le).collect()),
        })
    }

    /// Bytes the values occupy: heap for owned values, page cache for mapped ones (resident
    /// once searched, so counted alike by the engine's memory budget, as the arena's are).
    pub(crate) fn bytes(&self) -> usize {
        let size = std::mem::size_of::<T>();
        match self {
            Stored::Owned(values) => values.capacity() * size,
            Stored::Mapped(mapped) => mapped.len() * size,
        }
    }
}

impl<T: Plain> Deref for Stored<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Stored::Owned(values) => values,
            Stored::Mapped(mapped) => mapped.as_slice(),
        }
    }
}

/// The little-endian bytes of `values`: their own memory on little-endian machines.
pub(crate) fn le_bytes<T: Plain>(values: &[T]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: the slice's memory is `size_of_val(values)` initialised bytes of plain
        // numbers (no padding), and u8 has no alignment.
        let bytes = unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
        };
        std::borrow::Cow::Borrowed(bytes)
    } else {
        let mut out = Vec::with_capacity(std::mem::size_of_val(values));
        for value in values {
            value.put_le(&mut out);
        }
        std::borrow::Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn values_read_back_as_written_mapped_or_not() {
        let mut file = tempfile::tempfile().unwrap();
        let floats = [1.5f32, -2.0, 3.25];
        let words = [7u32, u32::MAX];
        let bytes = [-128i8, 0, 127];
        file.write_all(&le_bytes(&floats)).unwrap();
        file.write_all(&le_bytes(&words)).unwrap();
        file.write_all(&le_bytes(&bytes)).unwrap();
        // SAFETY: the test's own temporary file, not changed while mapped.
        let map = Arc::new(unsafe { Mmap::map(&file) }.unwrap());
        let f = Stored::<f32>::read(&map, 0, 3).unwrap();
        let w = Stored::<u32>::read(&map, 12, 2).unwrap();
        let b = Stored::<i8>::read(&map, 20, 3).unwrap();
        assert_eq!((&*f, &*w, &*b), (&floats[..], &words[..], &bytes[..]));
        assert!(matches!(f, Stored::Mapped(_)) == cfg!(target_endian = "little"));
        // Misaligned: decoded instead of viewed.
        let odd = Stored::<u32>::read(&map, 21, 0).unwrap();
        assert!(odd.is_empty() && matches!(odd, Stored::Owned(_)));
        assert!(Stored::<u32>::read(&map, 20, 2).is_none(), "past the end");
        assert!(
            Stored::<u32>::read(&map, 0, usize::MAX).is_none(),
            "overflow"
        );
    }
}
