//! Integer dot products of a 16-bit query with 8-bit codes: what every approximate comparison
//! of the vector index computes, with a kernel per CPU.
//!
//! - [`dot_i16_i8`]: one code, for a graph search's scattered comparisons;
//! - [`dots_i16_i8`]: every code of a contiguous run, for the exact scans. Choosing the kernel
//!   once per run instead of once per code keeps it inlined in the loop over the codes (384
//!   dimensions: 12–16 ns a code instead of 17–20).
//!
//! Each picks at run time the widest kernel the CPU has: AVX-512 (32 products a step), AVX2 (16
//! a step) or a portable loop. A run of codes also has an AVX-512 VNNI kernel (64 products in
//! two instructions, four codes at a time). All give the same integers.

/// Longest vectors the AVX2 kernel takes: each product is below 2^22 (32 767 × 127), so an
/// `i32` lane holds 512 of them, and each lane of its one accumulator sums one product in eight.
#[cfg(target_arch = "x86_64")]
const AVX2_MAX_LEN: usize = 8 * 512;

/// Longest vectors the AVX-512 kernel takes: each lane of its two accumulators sums one product
/// in thirty-two (a tail step included), 256 at most, well within an `i32`.
#[cfg(target_arch = "x86_64")]
const AVX512_MAX_LEN: usize = 8 * 1024;

/// Longest vectors the VNNI kernel takes, 31 of its 64-byte steps. Four lanes (added up in 32
/// bits by [`sum_four`]) then hold 16 products a step, 496 in all, each at most 2^22 in
/// magnitude (32 768 × 128): below 2^31. One more step could reach 2^31 exactly.
#[cfg(target_arch = "x86_64")]
const VNNI_MAX_LEN: usize = 31 * 64;

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
        if query.len() <= VNNI_MAX_LEN && has_vnni() {
            // SAFETY: the CPU supports AVX-512 F, BW and VNNI, checked just above.
            return unsafe { dots_vnni(query, codes, out) };
        }
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

#[cfg(target_arch = "x86_64")]
#[inline]
fn has_vnni() -> bool {
    has_avx512() && std::is_x86_feature_detected!("avx512vnni")
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

/// The VNNI kernel. `vpdpbusd` multiplies unsigned bytes by signed bytes, four to a 32-bit
/// lane, so the 16-bit query is split once per run into its low byte `lo` (unsigned) and its
/// high byte `hi` (signed), `q = 256 hi + lo`, and each code `c` is also read as the unsigned
/// `c + 128` (one `xor`):
///
/// `q c = lo c + 256 (c + 128) hi − 32 768 hi`
///
/// Two `vpdpbusd` per 64 dimensions, against three instructions per 32 for the AVX-512 kernel.
/// The last term depends on the query alone: subtracted lane by lane, it leaves in each lane
/// the exact dot product of that lane's dimensions. One code at a time, each step waited for
/// the `vpdpbusd` before it and the kernel was no faster than the AVX-512 one; four codes go
/// step by step together, and their lanes are added up together ([`sum_four`]). 384
/// dimensions on the 2-core AMD EPYC (Zen 4), a run of 256 to 20 000 codes: 6.5–7.3 ns a code
/// against 8.7–8.9.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn dots_vnni(query: &[i16], codes: &[i8], out: &mut [i64]) {
    let query = SplitQuery::new(query);
    let mut codes = codes.chunks_exact(query.len);
    let mut out = out.iter_mut();
    loop {
        match (codes.next(), codes.next(), codes.next(), codes.next()) {
            (Some(a), Some(b), Some(c), Some(d)) => {
                let [a, b, c, d] = query.lanes([a, b, c, d]);
                for sum in sum_four(a, b, c, d) {
                    match out.next() {
                        Some(slot) => *slot = sum,
                        None => return,
                    }
                }
            }
            rest => {
                for code in [rest.0, rest.1, rest.2].into_iter().flatten() {
                    match out.next() {
                        Some(slot) => *slot = sum_one(query.lanes([code])[0]),
                        None => return,
                    }
                }
                return;
            }
        }
    }
}

/// A query split for [`dots_vnni`], with what every code's products need.
#[cfg(target_arch = "x86_64")]
struct SplitQuery {
    /// The query's length (at most [`VNNI_MAX_LEN`]).
    len: usize,
    /// The low bytes, zero past `len`.
    lo: [u8; VNNI_MAX_LEN],
    /// The high bytes, zero past `len`.
    hi: [i8; VNNI_MAX_LEN],
    /// The lanes' share of `32 768 hi`, the term that depends on the query alone.
    offset: std::arch::x86_64::__m512i,
}

#[cfg(target_arch = "x86_64")]
impl SplitQuery {
    /// Bytes a step reads.
    const STEP: usize = 64;

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn new(query: &[i16]) -> SplitQuery {
        use std::arch::x86_64::*;
        let len = query.len().min(VNNI_MAX_LEN);
        let mut split = SplitQuery {
            len,
            lo: [0; VNNI_MAX_LEN],
            hi: [0; VNNI_MAX_LEN],
            offset: _mm512_setzero_si512(),
        };
        for (i, q) in query[..len].iter().enumerate() {
            let [low, high] = q.to_le_bytes();
            split.lo[i] = low;
            split.hi[i] = high as i8;
        }
        let mut offset = _mm512_setzero_si512();
        for i in (0..len).step_by(Self::STEP) {
            offset = _mm512_dpbusd_epi32(offset, _mm512_set1_epi8(i8::MIN), split.at(i).1);
        }
        split.offset = _mm512_slli_epi32::<8>(offset);
        split
    }

    /// The low and high bytes of the step at `i`, a multiple of 64 below `len`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn at(&self, i: usize) -> (std::arch::x86_64::__m512i, std::arch::x86_64::__m512i) {
        use std::arch::x86_64::*;
        let i = i.min(VNNI_MAX_LEN - Self::STEP);
        // SAFETY: `i + 64 <= VNNI_MAX_LEN`, the length of both arrays.
        unsafe {
            (
                _mm512_loadu_si512(self.lo.as_ptr().add(i).cast()),
                _mm512_loadu_si512(self.hi.as_ptr().add(i).cast()),
            )
        }
    }

    /// The dot products of `K` codes (each `len` long) with the query, lane by lane: each lane
    /// the exact dot product of its dimensions. The codes go step by step together, so the
    /// `2 K` chains of `vpdpbusd` overlap.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn lanes<const K: usize>(&self, codes: [&[i8]; K]) -> [std::arch::x86_64::__m512i; K] {
        use std::arch::x86_64::*;
        let flip = _mm512_set1_epi8(i8::MIN);
        let mut low = [_mm512_setzero_si512(); K];
        let mut high = [_mm512_setzero_si512(); K];
        for i in (0..self.len).step_by(Self::STEP) {
            let (l, h) = self.at(i);
            let width = (self.len - i).min(Self::STEP);
            let mask: __mmask64 = u64::MAX >> (Self::STEP - width);
            for k in 0..K {
                let code = codes[k];
                // SAFETY: the mask's lanes are below `width`, and `i + width <= len`, the
                // code's length (checked): the load stays inside the code. The masked-off
                // bytes flip to 128, but their `hi` (and `lo`) is zero.
                let x = if code.len() >= i + width {
                    unsafe { _mm512_maskz_loadu_epi8(mask, code.as_ptr().add(i)) }
                } else {
                    _mm512_setzero_si512()
                };
                low[k] = _mm512_dpbusd_epi32(low[k], l, x);
                high[k] = _mm512_dpbusd_epi32(high[k], _mm512_xor_si512(x, flip), h);
            }
        }
        std::array::from_fn(|k| {
            _mm512_sub_epi32(
                _mm512_add_epi32(low[k], _mm512_slli_epi32::<8>(high[k])),
                self.offset,
            )
        })
    }
}

/// The totals of four codes' lanes. The lanes are first added four by four in 32 bits (within
/// an `i32` up to [`VNNI_MAX_LEN`] dimensions), then widened.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn sum_four(
    a: std::arch::x86_64::__m512i,
    b: std::arch::x86_64::__m512i,
    c: std::arch::x86_64::__m512i,
    d: std::arch::x86_64::__m512i,
) -> [i64; 4] {
    use std::arch::x86_64::*;
    // In each 128-bit quarter: [a0 + a2, b0 + b2, a1 + a3, b1 + b3], the same for c and d.
    let ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    let cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
    // In each quarter: the quarter's totals of a, b, c and d.
    let abcd = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
    let halves = _mm512_add_epi64(
        _mm512_cvtepi32_epi64(_mm512_castsi512_si256(abcd)),
        _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64::<1>(abcd)),
    );
    let total = _mm256_add_epi64(
        _mm512_castsi512_si256(halves),
        _mm512_extracti64x4_epi64::<1>(halves),
    );
    let mut sums = [0i64; 4];
    // SAFETY: `sums` is 32 bytes, the size of the stored vector.
    unsafe { _mm256_storeu_si256(sums.as_mut_ptr().cast(), total) };
    sums
}

/// The total of one code's lanes, widened before they are added up.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn sum_one(lanes: std::arch::x86_64::__m512i) -> i64 {
    use std::arch::x86_64::*;
    _mm512_reduce_add_epi64(_mm512_add_epi64(
        _mm512_cvtepi32_epi64(_mm512_castsi512_si256(lanes)),
        _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64::<1>(lanes)),
    ))
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

    /// Every byte split the VNNI kernel makes: both ends of both ranges, mixed signs, lengths
    /// around its 64-byte step and its longest vector (1 984), and beyond it (another kernel);
    /// seven codes, so four are added up together and three one by one.
    #[test]
    fn runs_agree_at_the_extremes() {
        let queries: [fn(usize) -> i16; 4] = [
            |_| i16::MIN,
            |_| i16::MAX,
            |i| if i % 3 == 0 { i16::MIN } else { i16::MAX },
            |i| ((i * 7919) % 65_536) as u16 as i16,
        ];
        let codes: [fn(usize) -> i8; 4] = [
            |_| i8::MIN,
            |_| i8::MAX,
            |i| if i % 2 == 0 { i8::MIN } else { i8::MAX },
            |i| ((i * 131) % 256) as u8 as i8,
        ];
        for dim in [1usize, 63, 64, 65, 127, 384, 1983, 1984, 1985] {
            for make_query in queries {
                let q: Vec<i16> = (0..dim).map(make_query).collect();
                for make_code in codes {
                    let all: Vec<i8> = (0..dim * 7).map(make_code).collect();
                    let mut out = [0i64; 7];
                    dots_i16_i8(&q, &all, &mut out);
                    for (i, got) in out.iter().enumerate() {
                        let expected = dot_portable(&q, &all[i * dim..(i + 1) * dim]);
                        assert_eq!(*got, expected, "dim {dim}, code {i}");
                    }
                }
            }
        }
    }
}
