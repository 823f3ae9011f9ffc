//! Integer dot products with 8-bit codes: what every approximate comparison of the vector
//! index computes, with a kernel per CPU.
//!
//! - [`dot_i16_i8`]: a 16-bit query with one code, for a graph search's scattered comparisons
//!   (four at a time on CPUs with VNNI: `super::kernel_split`);
//! - [`ByteQuery::dots`]: an 8-bit query with every code of a contiguous run, for the exact
//!   scans. Choosing the kernel once per run instead of once per code keeps it inlined in the
//!   loop over the codes (384 dimensions: 12–16 ns a code instead of 17–20).
//!
//! Each picks at run time the widest kernel the CPU has: AVX-512 VNNI for runs (64 products an
//! instruction, four codes at a time), AVX-512 (32 products a step), AVX2 (16 a step) or a
//! portable loop. All give the same integers.

/// Longest vectors the AVX2 kernel takes: each product is below 2^22 (32 767 × 127), so an
/// `i32` lane holds 512 of them, and each lane of its one accumulator sums one product in eight.
#[cfg(target_arch = "x86_64")]
const AVX2_MAX_LEN: usize = 8 * 512;

/// Longest vectors the AVX-512 kernel takes: each lane of its two accumulators sums one product
/// in thirty-two (a tail step included), 256 at most, well within an `i32`.
#[cfg(target_arch = "x86_64")]
const AVX512_MAX_LEN: usize = 8 * 1024;

/// Longest queries the VNNI kernel takes. A product of two bytes is at most 2^14 in magnitude;
/// each 32-bit sum [`sum_four`] forms holds a quarter of a code's products, so at this length
/// it stays within 2^28 (and a lane's raw sum, before the query's offset comes off, within
/// 2^27: 4 096 terms below 2^15).
#[cfg(target_arch = "x86_64")]
const VNNI_MAX_LEN: usize = 1 << 16;

// Every space's vectors fit the VNNI kernel.
#[cfg(target_arch = "x86_64")]
const _: () = assert!(crate::space::MAX_DIM <= VNNI_MAX_LEN);

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

/// A query of signed bytes, prepared once for every run of codes a scan compares it with.
pub(super) struct ByteQuery {
    /// The values widened, for the kernels of 16-bit queries.
    wide: Vec<i16>,
    /// The values, then zeros up to whole 64-byte steps.
    #[cfg(target_arch = "x86_64")]
    bytes: Vec<i8>,
    /// For each 32-bit lane of a VNNI step, `128 ×` the sum of the query values it multiplies.
    #[cfg(target_arch = "x86_64")]
    offsets: [i32; 16],
}

impl ByteQuery {
    /// `values` prepared.
    pub(super) fn new(values: &[i8]) -> ByteQuery {
        #[cfg(target_arch = "x86_64")]
        let (bytes, offsets) = {
            let mut bytes = values.to_vec();
            bytes.resize(values.len().div_ceil(64) * 64, 0);
            // Only the VNNI kernel reads them, and only up to its length, within which they
            // stay below 2^26; past it they would be summed for nothing (and could overflow).
            let offsets = if values.len() <= VNNI_MAX_LEN {
                lane_sums(&bytes, 128)
            } else {
                [0; 16]
            };
            (bytes, offsets)
        };
        ByteQuery {
            wide: values.iter().map(|v| i16::from(*v)).collect(),
            #[cfg(target_arch = "x86_64")]
            bytes,
            #[cfg(target_arch = "x86_64")]
            offsets,
        }
    }

    /// The values, widened.
    #[cfg(test)]
    pub(super) fn wide(&self) -> &[i16] {
        &self.wide
    }

    /// Writes into `out[i]` the dot product of the query with the `i`-th code of `codes`
    /// (codes as long as the query, back to back); stops at whichever of `out` and the codes
    /// ends first.
    pub(super) fn dots(&self, codes: &[i8], out: &mut [i64]) {
        let query = self.wide.as_slice();
        if query.is_empty() {
            out.fill(0);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if query.len() <= VNNI_MAX_LEN && has_vnni() {
                // SAFETY: the CPU supports AVX-512 F, BW and VNNI, checked just above.
                return unsafe { dots_vnni(self, codes, out) };
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
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx512() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
}

/// For each 32-bit lane of a 64-byte VNNI step, `weight ×` the sum of the bytes of `bytes`
/// (whole steps) that lane multiplies: the query's share a VNNI kernel takes off each lane.
#[cfg(target_arch = "x86_64")]
pub(super) fn lane_sums(bytes: &[i8], weight: i32) -> [i32; 16] {
    let mut sums = [0i32; 16];
    for step in bytes.chunks_exact(64) {
        for (sum, four) in sums.iter_mut().zip(step.chunks_exact(4)) {
            *sum += four.iter().map(|v| weight * i32::from(*v)).sum::<i32>();
        }
    }
    sums
}

#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) fn has_vnni() -> bool {
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
    _mm512_reduce_add_epi64(_mm512_add_epi64(widen_halves(even), widen_halves(odd)))
}

/// The 16 lanes of `x` widened to 64 bits, lane `i` added to lane `i + 8`: eight sums that
/// cannot overflow, for the kernels to add up.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn widen_halves(x: std::arch::x86_64::__m512i) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    _mm512_add_epi64(
        _mm512_cvtepi32_epi64(_mm512_castsi512_si256(x)),
        _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64::<1>(x)),
    )
}

/// The VNNI kernel. `vpdpbusd` multiplies unsigned bytes by signed bytes, four to a 32-bit
/// lane, so each code byte `c` is read as the unsigned `c + 128` (one `xor`), and the query's
/// share of the excess, `128 q`, is taken off each lane once the code is done
/// ([`ByteQuery::offsets`]): each lane then holds the exact dot product of its dimensions.
/// One `vpdpbusd` per 64 dimensions. Each waits for the one before it on the same
/// accumulator, so four codes go step by step together, with two accumulators each (even and
/// odd steps), and their lanes are added up together ([`sum_four`]). About twice as fast as the
/// AVX-512 kernel of a 16-bit query on a Zen 4 core (docs/history.md has the timings).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn dots_vnni(query: &ByteQuery, codes: &[i8], out: &mut [i64]) {
    let mut codes = codes.chunks_exact(query.wide.len());
    let mut out = out.iter_mut();
    loop {
        match (codes.next(), codes.next(), codes.next(), codes.next()) {
            (Some(a), Some(b), Some(c), Some(d)) => {
                let [a, b, c, d] = vnni_lanes(query, [a, b, c, d]);
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
                        Some(slot) => *slot = sum_one(vnni_lanes(query, [code])[0]),
                        None => return,
                    }
                }
                return;
            }
        }
    }
}

/// The dot products of `K` codes (each as long as the query) with the query, lane by lane.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn vnni_lanes<const K: usize>(
    query: &ByteQuery,
    codes: [&[i8]; K],
) -> [std::arch::x86_64::__m512i; K] {
    use std::arch::x86_64::*;
    const STEP: usize = 64;
    let len = query.wide.len();
    let flip = _mm512_set1_epi8(i8::MIN);
    let mut sums = [_mm512_setzero_si512(); K];
    // Never taken (the codes come from `chunks_exact`), but it keeps every load below inside
    // its code whatever the caller passes.
    if codes.iter().any(|code| code.len() < len) {
        return sums;
    }
    let whole = len / STEP * STEP;
    // SAFETY (every load): `bytes` holds whole steps past `len`, so `i + 64 <= bytes.len()`;
    // each code is at least `len` long (checked above), and a whole step reads `i..i + 64`
    // with `i + 64 <= whole <= len`, the tail only its lanes below `len - whole`. The
    // masked-off code bytes flip to 128, but the query's bytes there are zero.
    let mut odd = [_mm512_setzero_si512(); K];
    let pairs = whole / (2 * STEP) * (2 * STEP);
    for i in (0..pairs).step_by(2 * STEP) {
        let q = unsafe { _mm512_loadu_si512(query.bytes.as_ptr().add(i).cast()) };
        let r = unsafe { _mm512_loadu_si512(query.bytes.as_ptr().add(i + STEP).cast()) };
        for k in 0..K {
            let x = unsafe { _mm512_loadu_si512(codes[k].as_ptr().add(i).cast()) };
            let y = unsafe { _mm512_loadu_si512(codes[k].as_ptr().add(i + STEP).cast()) };
            sums[k] = _mm512_dpbusd_epi32(sums[k], _mm512_xor_si512(x, flip), q);
            odd[k] = _mm512_dpbusd_epi32(odd[k], _mm512_xor_si512(y, flip), r);
        }
    }
    for i in (pairs..whole).step_by(STEP) {
        let q = unsafe { _mm512_loadu_si512(query.bytes.as_ptr().add(i).cast()) };
        for k in 0..K {
            let x = unsafe { _mm512_loadu_si512(codes[k].as_ptr().add(i).cast()) };
            sums[k] = _mm512_dpbusd_epi32(sums[k], _mm512_xor_si512(x, flip), q);
        }
    }
    for k in 0..K {
        sums[k] = _mm512_add_epi32(sums[k], odd[k]);
    }
    if whole < len {
        let mask: __mmask64 = u64::MAX >> (STEP - (len - whole));
        let q = unsafe { _mm512_loadu_si512(query.bytes.as_ptr().add(whole).cast()) };
        for k in 0..K {
            let x = unsafe { _mm512_maskz_loadu_epi8(mask, codes[k].as_ptr().add(whole)) };
            sums[k] = _mm512_dpbusd_epi32(sums[k], _mm512_xor_si512(x, flip), q);
        }
    }
    // SAFETY: `offsets` is 64 bytes, the size of the loaded vector.
    let offsets = unsafe { _mm512_loadu_si512(query.offsets.as_ptr().cast()) };
    sums.map(|sum| _mm512_sub_epi32(sum, offsets))
}

/// The totals of four codes' lanes. The lanes are first added four by four in 32 bits (within
/// an `i32` up to [`VNNI_MAX_LEN`] dimensions), then widened.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn sum_four(
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
    let halves = widen_halves(abcd);
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
pub(super) fn sum_one(lanes: std::arch::x86_64::__m512i) -> i64 {
    std::arch::x86_64::_mm512_reduce_add_epi64(widen_halves(lanes))
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

    /// The dot products of a byte query with each code of `codes`, one by one.
    fn expected(query: &[i8], codes: &[i8]) -> Vec<i64> {
        let wide: Vec<i16> = query.iter().map(|v| i16::from(*v)).collect();
        codes
            .chunks_exact(query.len())
            .map(|code| dot_portable(&wide, code))
            .collect()
    }

    #[test]
    fn runs_give_each_code_its_dot() {
        for dim in [1usize, 17, 64, 384] {
            let q: Vec<i8> = (0..dim).map(|i| ((i * 397) % 251) as u8 as i8).collect();
            let codes: Vec<i8> = (0..dim * 9).map(|i| ((i * 53) % 251) as i8).collect();
            let mut out = vec![i64::MIN; 9];
            ByteQuery::new(&q).dots(&codes, &mut out);
            assert_eq!(out, expected(&q, &codes), "dim {dim}");
        }
        // A shorter output takes the first codes only; an empty query gives zeros.
        let q = [3i8, -7, 127, -128];
        let mut out = [7i64; 2];
        ByteQuery::new(&q).dots(&code(12), &mut out);
        assert_eq!(out[..], expected(&q, &code(8))[..]);
        ByteQuery::new(&[]).dots(&code(12), &mut out);
        assert_eq!(out, [0, 0]);
    }

    /// Both ends of both ranges, mixed signs, lengths around the VNNI kernel's 64-byte step,
    /// and seven codes, so that four are added up together and three one by one.
    #[test]
    fn runs_agree_at_the_extremes() {
        let queries: [fn(usize) -> i8; 4] = [
            |_| i8::MIN,
            |_| i8::MAX,
            |i| if i % 3 == 0 { i8::MIN } else { i8::MAX },
            |i| ((i * 7919) % 256) as u8 as i8,
        ];
        let codes: [fn(usize) -> i8; 4] = [
            |_| i8::MIN,
            |_| i8::MAX,
            |i| if i % 2 == 0 { i8::MIN } else { i8::MAX },
            |i| ((i * 131) % 256) as u8 as i8,
        ];
        for dim in [1usize, 63, 64, 65, 127, 384, 1985, 4097] {
            for make_query in queries {
                let q: Vec<i8> = (0..dim).map(make_query).collect();
                let query = ByteQuery::new(&q);
                for make_code in codes {
                    let all: Vec<i8> = (0..dim * 7).map(make_code).collect();
                    let want = expected(&q, &all);
                    let mut out = [0i64; 7];
                    query.dots(&all, &mut out);
                    assert_eq!(out[..], want[..], "dim {dim}");
                    // The kernels this CPU would not pick for runs, where it has them.
                    #[cfg(target_arch = "x86_64")]
                    {
                        if has_avx512() {
                            // SAFETY: the CPU supports AVX-512 F and BW, checked just above.
                            unsafe { dots_avx512(query.wide(), &all, &mut out) };
                            assert_eq!(out[..], want[..], "AVX-512, dim {dim}");
                        }
                        if std::is_x86_feature_detected!("avx2") {
                            // SAFETY: the CPU supports AVX2, checked just above.
                            unsafe { dots_avx2(query.wide(), &all, &mut out) };
                            assert_eq!(out[..], want[..], "AVX2, dim {dim}");
                        }
                    }
                }
            }
        }
    }
}
