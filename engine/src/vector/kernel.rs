//! Integer dot products of a 16-bit query with 8-bit codes: what every approximate comparison
//! of the vector index computes, with a kernel per CPU.
//!
//! - [`dot_i16_i8`]: one code, for a graph search's scattered comparisons;
//! - [`dots_i16_i8`]: every code of a contiguous run, for the exact scans. Choosing the kernel
//!   once per run instead of once per code keeps it inlined in the loop over the codes (384
//!   dimensions: 12–16 ns a code instead of 17–20).
//!
//! Each picks at run time the widest kernel the CPU has: AVX-512 (32 products a step), AVX2 (16
//! a step) or a portable loop. All give the same integers.

/// Longest vectors the AVX2 kernel takes: each product is below 2^22 (32 767 × 127), so an
/// `i32` lane holds 512 of them, and each lane of its one accumulator sums one product in eight.
#[cfg(target_arch = "x86_64")]
const AVX2_MAX_LEN: usize = 8 * 512;

/// Longest vectors the AVX-512 kernel takes: each lane of its two accumulators sums one product
/// in thirty-two (a tail step included), 256 at most, well within an `i32`.
#[cfg(target_arch = "x86_64")]
const AVX512_MAX_LEN: usize = 8 * 1024;

/// The dot product of `a` and `b` (over the shorter's length).
#[inline]
pub(super) fn dot_i16_i8(a: &[i16], b: &[i8]) -> i64 {
    #[cfg(target_arch = "x86_64")]
    {
        if a.len() <= AVX512_MAX_LEN && has_avx512() {
            // SAFETY: the CPU supports AVX-512 F and BW, checked just above.
            return unsafe { dot_avx512(a, b) };
        }
        if a.len() <= AVX2_MAX_LEN && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_portable(a, b)
}

/// Writes into `out[i]` the dot product of `query` with the `i`-th code of `codes` (codes as
/// long as the query, back to back); stops at whichever of `out` and the codes ends first.
pub(super) fn dots_i16_i8(query: &[i16], codes: &[i8], out: &mut [i64]) {
    if query.is_empty() {
        out.fill(0);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if query.len() <= AVX512_MAX_LEN && has_avx512() {
            // SAFETY: the CPU supports AVX-512 F and BW, checked just above.
            return unsafe { dots_avx512(query, codes, out) };
        }
        if query.len() <= AVX2_MAX_LEN && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { dots_avx2(query, codes, out) };
        }
    }
    for (code, out) in codes.chunks_exact(query.len()).zip(out) {
        *out = dot_portable(query, code);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx512() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
}

#[inline(always)]
fn dot_portable(a: &[i16], b: &[i8]) -> i64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i64::from(i32::from(*x) * i32::from(*y)))
        .sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(query: &[i16], codes: &[i8], out: &mut [i64]) {
    for (code, out) in codes.chunks_exact(query.len()).zip(out) {
        // SAFETY: this function runs only where AVX2 is, as `dot_avx2` needs.
        *out = unsafe { dot_avx2(query, code) };
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(a: &[i16], b: &[i8]) -> i64 {
    use std::arch::x86_64::*;
    const LANES: usize = 16;
    let n = a.len().min(b.len());
    let whole = n / LANES * LANES;
    let mut acc = _mm256_setzero_si256();
    let mut i = 0;
    while i < whole {
        // SAFETY: `i + 16 <= n`, so both unaligned loads stay inside the slices.
        let (x, y) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().add(i).cast()),
                _mm_loadu_si128(b.as_ptr().add(i).cast()),
            )
        };
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_cvtepi8_epi16(y)));
        i += LANES;
    }
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 bytes, the size of the stored vector.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), acc) };
    lanes.iter().map(|l| i64::from(*l)).sum::<i64>() + dot_portable(&a[whole..n], &b[whole..n])
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn dots_avx512(query: &[i16], codes: &[i8], out: &mut [i64]) {
    for (code, out) in codes.chunks_exact(query.len()).zip(out) {
        // SAFETY: this function runs only where AVX-512 F and BW are, as `dot_avx512` needs.
        *out = unsafe { dot_avx512(query, code) };
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn dot_avx512(a: &[i16], b: &[i8]) -> i64 {
    use std::arch::x86_64::*;
    const LANES: usize = 32;
    let n = a.len().min(b.len());
    let (a, b) = (a.as_ptr(), b.as_ptr());
    // SAFETY (every load below): a step at `i` reads `i..i + 32` with `i + 32 <= n`, and the
    // masked tail reads only its lanes below `n - i`, so no load leaves the slices.
    let step = |i: usize| unsafe {
        let x = _mm512_loadu_si512(a.add(i).cast());
        let y = _mm512_cvtepi8_epi16(_mm256_loadu_si256(b.add(i).cast()));
        _mm512_madd_epi16(x, y)
    };
    let (mut even, mut odd) = (_mm512_setzero_si512(), _mm512_setzero_si512());
    let mut i = 0;
    while i + 2 * LANES <= n {
        even = _mm512_add_epi32(even, step(i));
        odd = _mm512_add_epi32(odd, step(i + LANES));
        i += 2 * LANES;
    }
    if i + LANES <= n {
        even = _mm512_add_epi32(even, step(i));
        i += LANES;
    }
    if i < n {
        let mask: __mmask32 = (1u32 << (n - i)) - 1;
        // SAFETY: see above; the masked-off lanes are not read (a 64-bit mask of the same
        // low bits loads the bytes).
        let (x, y) = unsafe {
            (
                _mm512_maskz_loadu_epi16(mask, a.add(i)),
                _mm512_maskz_loadu_epi8(u64::from(mask), b.add(i)),
            )
        };
        let y = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(y));
        odd = _mm512_add_epi32(odd, _mm512_madd_epi16(x, y));
    }
    // The lanes' total may not fit an `i32`: widened before they are added up.
    let wide = |x: __m512i| {
        _mm512_add_epi64(
            _mm512_cvtepi32_epi64(_mm512_castsi512_si256(x)),
            _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64::<1>(x)),
        )
    };
    _mm512_reduce_add_epi64(_mm512_add_epi64(wide(even), wide(odd)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(n: usize) -> Vec<i16> {
        (0..n)
            .map(|i| ((i * 397) % 32_000) as i16 - 16_000)
            .collect()
    }

    fn code(n: usize) -> Vec<i8> {
        (0..n).map(|i| ((i * 37) % 255) as i8).collect()
    }

    #[test]
    fn kernels_agree_at_odd_lengths() {
        for n in [
            0usize, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 384, 1000, 5000,
        ] {
            let (a, b) = (query(n), code(n));
            assert_eq!(dot_i16_i8(&a, &b), dot_portable(&a, &b), "n={n}");
        }
        // The largest magnitudes, at the longest lengths the vector kernels take and beyond.
        for n in [4096usize, 4097, 8192, 8193] {
            let (a, b) = (vec![i16::MAX; n], vec![i8::MAX; n]);
            let expected = n as i64 * i64::from(i16::MAX) * i64::from(i8::MAX);
            assert_eq!(dot_i16_i8(&a, &b), expected, "n={n}");
            let (a, b) = (vec![i16::MIN + 1; n], vec![i8::MAX; n]);
            assert_eq!(dot_i16_i8(&a, &b), -expected, "n={n}");
        }
    }

    #[test]
    fn many_codes_give_each_code_its_dot() {
        for dim in [1usize, 17, 64, 384] {
            let q = query(dim);
            let codes: Vec<i8> = (0..dim * 9).map(|i| ((i * 53) % 251) as i8).collect();
            let mut out = vec![i64::MIN; 9];
            dots_i16_i8(&q, &codes, &mut out);
            for (i, got) in out.iter().enumerate() {
                let expected = dot_portable(&q, &codes[i * dim..(i + 1) * dim]);
                assert_eq!(*got, expected, "dim {dim}, code {i}");
            }
        }
        // A shorter output takes the first codes only; an empty query gives zeros.
        let mut out = [7i64; 2];
        dots_i16_i8(&query(4), &code(12), &mut out);
        assert_eq!(out[0], dot_portable(&query(4), &code(4)));
        dots_i16_i8(&[], &code(12), &mut out);
        assert_eq!(out, [0, 0]);
    }
}
