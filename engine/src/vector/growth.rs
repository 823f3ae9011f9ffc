//! How the large per-vector arrays of a collection grow: by doubling while small, by an eighth
//! once large.
//!
//! A collection's arrays (the floats of its vectors, the int8 codes of its exact scans) are
//! filled exactly by a load, and a `Vec` doubles when one more element comes: the first vector
//! written after a million MiniLM vectors were loaded reserved 3 GiB for the floats (heaptrack
//! over the stores benchmark at a million: its largest allocation). Linux's allocator moves a
//! block that size without copying, but the engine's memory budget counts capacity, and an
//! allocator that copies would hold both blocks at once. [`make_room`] grows by [`growth`]
//! instead.

/// Bytes up to which an array doubles when it grows (about 2 700 MiniLM vectors of floats);
/// past it, it grows by at least as much, and by an eighth from eight times it.
const DOUBLING_UNTIL_BYTES: usize = 4 << 20;

/// Makes room in `values` for `additional` more, growing it by [`growth`] when it has too
/// little.
pub(crate) fn make_room<T>(values: &mut Vec<T>, additional: usize) {
    if values.capacity() - values.len() < additional {
        values.reserve_exact(growth::<T>(values.len(), additional));
    }
}

/// How many elements of `T` to add to an array holding `len` that needs `additional` more:
/// `len` (doubling) while small, then [`DOUBLING_UNTIL_BYTES`] worth, then an eighth of `len`;
/// never less than `additional`. Geometric either way, so appends stay amortized constant time.
fn growth<T>(len: usize, additional: usize) -> usize {
    let doubling_until = DOUBLING_UNTIL_BYTES / std::mem::size_of::<T>().max(1);
    len.min((len / 8).max(doubling_until)).max(additional)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Floats up to which the floats of a collection double.
    const FLOATS: usize = DOUBLING_UNTIL_BYTES / 4;

    #[test]
    fn growth_doubles_while_small_then_takes_an_eighth() {
        assert_eq!(growth::<f32>(0, 384), 384);
        assert_eq!(growth::<f32>(1000, 384), 1000);
        assert_eq!(growth::<f32>(FLOATS, 384), FLOATS);
        assert_eq!(growth::<f32>(4 * FLOATS, 384), FLOATS);
        assert_eq!(growth::<f32>(384_000_000, 384), 48_000_000);
        assert_eq!(growth::<f32>(10, 5000), 5000);
    }

    #[test]
    fn the_doubling_limit_is_in_bytes_whatever_the_element() {
        assert_eq!(growth::<i8>(4 * FLOATS, 384), 4 * FLOATS);
        assert_eq!(growth::<i8>(384_000_000, 384), 48_000_000);
    }

    #[test]
    fn a_full_large_array_grows_by_an_eighth() {
        // 64 MiB of codes: past eight times the 4 MiB at which arrays stop doubling.
        let len = 64 * FLOATS;
        let mut values = vec![0i8; len];
        values.shrink_to_fit();
        make_room(&mut values, 384);
        assert!(values.capacity() >= len + 384);
        assert!(
            values.capacity() <= len + len / 8 + 4096,
            "{}",
            values.capacity()
        );
    }
}
