//! A 16-bit query against codes wherever they lie, four at a time: the kernel of a graph
//! search, which compares its query with the neighbours of one point after another, their
//! codes scattered through the layout.
//!
//! AVX-512 VNNI's `vpdpbusd` multiplies unsigned bytes by signed bytes, four to a 32-bit lane.
//! So the query is split once per search into its low byte `lo` (unsigned) and its high byte
//! `hi` (signed), `q = 256 hi + lo`, and each code byte `c` is also read as the unsigned
//! `c + 128` (one `xor`):
//!
//! `q c = lo c + 256 (c + 128) hi − 32 768 hi`
//!
//! Two `vpdpbusd` per 64 dimensions, where the AVX-512 kernel of [`super::kernel::dot_i16_i8`]
//! takes three instructions per 32. The last term depends on the query alone and comes off
//! each lane once ([`SplitQuery::offsets`]), which leaves in each lane the exact dot product
//! of its dimensions (the additions wrap, and only the final lane has to fit an `i32`). One
//! code at a time, each step waits for the `vpdpbusd` before it and the kernel was no faster
//! than the AVX-512 one (stop 64, `docs/history.md`), so four codes go step by step together.
//! Codes past [`SPLIT_MAX_LEN`], and CPUs without VNNI, take `dot_i16_i8` one code at a time.

#[cfg(target_arch = "x86_64")]
use super::kernel::{has_vnni, lane_sums, sum_four, sum_one};

/// Longest queries the kernel takes, 31 of its 64-byte steps: [`sum_four`] adds four lanes in
/// 32 bits, 16 products a step, 496 in all, each at most 2^22 in magnitude (32 768 × 128):
/// below 2^31. One more step could reach 2^31 exactly.
pub(super) const SPLIT_MAX_LEN: usize = 31 * 64;

/// A 16-bit query split into bytes, for the VNNI kernel.
pub(super) struct SplitQuery {
    /// The query's length.
    len: usize,
    /// The low bytes, then zeros up to whole 64-byte steps.
    lo: Vec<u8>,
    /// The high bytes, then zeros up to whole 64-byte steps.
    hi: Vec<i8>,
    /// For each 32-bit lane of a step, `32 768 ×` the sum of the high bytes it multiplies.
    offsets: [i32; 16],
}

impl SplitQuery {
    /// `query` split, or `None` where the CPU has no VNNI or the query is too long.
    pub(super) fn new(query: &[i16]) -> Option<SplitQuery> {
        #[cfg(target_arch = "x86_64")]
        {
            if query.is_empty() || query.len() > SPLIT_MAX_LEN || !has_vnni() {
                return None;
            }
            let padded = query.len().div_ceil(64) * 64;
            let (mut lo, mut hi) = (vec![0u8; padded], vec![0i8; padded]);
            for (i, q) in query.iter().enumerate() {
                let [low, high] = q.to_le_bytes();
                lo[i] = low;
                hi[i] = high as i8;
            }
            Some(SplitQuery {
                len: query.len(),
                offsets: lane_sums(&hi, 32_768),
                lo,
                hi,
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = query;
            None
        }
    }

    /// The dot products of the query with four codes, each at least as long as the query.
    pub(super) fn dots4(&self, codes: [&[i8]; 4]) -> [i64; 4] {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: a `SplitQuery` exists only where the CPU has AVX-512 F, BW and VNNI.
            unsafe {
                let [a, b, c, d] = split_lanes(self, codes);
                sum_four(a, b, c, d)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = codes;
            unreachable!("a split query is only made on x86-64")
        }
    }

    /// The dot product of the query with one code, at least as long as the query.
    pub(super) fn dot(&self, code: &[i8]) -> i64 {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: a `SplitQuery` exists only where the CPU has AVX-512 F, BW and VNNI.
            unsafe { sum_one(split_lanes(self, [code])[0]) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = code;
            unreachable!("a split query is only made on x86-64")
        }
    }
}

/// The dot products of `K` codes with the query, lane by lane; zeros for all of them if one
/// is shorter than the query (never the case: the codes' callers slice whole codes).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn split_lanes<const K: usize>(
    query: &SplitQuery,
    codes: [&[i8]; K],
) -> [std::arch::x86_64::__m512i; K] {
    use std::arch::x86_64::*;
    const STEP: usize = 64;
    let len = query.len;
    if codes.iter().any(|code| code.len() < len) {
        return [_mm512_setzero_si512(); K];
    }
    let flip = _mm512_set1_epi8(i8::MIN);
    let mut low = [_mm512_setzero_si512(); K];
    let mut high = [_mm512_setzero_si512(); K];
    // SAFETY (every load): `lo` and `hi` hold whole steps past `len`, so `i + 64` is within
    // them; each code is at least `len` long (checked above), and a step reads its bytes
    // `i..i + width` only, `i + width <= len`. The masked-off code bytes flip to 128, but the
    // query's bytes there are zero.
    for i in (0..len).step_by(STEP) {
        let width = (len - i).min(STEP);
        let mask: __mmask64 = u64::MAX >> (STEP - width);
        let l = unsafe { _mm512_loadu_si512(query.lo.as_ptr().add(i).cast()) };
        let h = unsafe { _mm512_loadu_si512(query.hi.as_ptr().add(i).cast()) };
        for k in 0..K {
            let x = unsafe { _mm512_maskz_loadu_epi8(mask, codes[k].as_ptr().add(i)) };
            low[k] = _mm512_dpbusd_epi32(low[k], l, x);
            high[k] = _mm512_dpbusd_epi32(high[k], _mm512_xor_si512(x, flip), h);
        }
    }
    // SAFETY: `offsets` is 64 bytes, the size of the loaded vector.
    let offsets = unsafe { _mm512_loadu_si512(query.offsets.as_ptr().cast()) };
    std::array::from_fn(|k| {
        _mm512_sub_epi32(
            _mm512_add_epi32(low[k], _mm512_slli_epi32::<8>(high[k])),
            offsets,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn portable(q: &[i16], code: &[i8]) -> i64 {
        q.iter()
            .zip(code)
            .map(|(a, b)| i64::from(*a) * i64::from(*b))
            .sum()
    }

    /// Both ends of both ranges, mixed signs, lengths around the 64-byte step and the longest
    /// query; four codes at a time and one.
    #[test]
    fn split_queries_give_each_code_its_exact_dot() {
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
        for dim in [1usize, 63, 64, 65, 127, 384, SPLIT_MAX_LEN] {
            for make_query in queries {
                let q: Vec<i16> = (0..dim).map(make_query).collect();
                let Some(split) = SplitQuery::new(&q) else {
                    println!("skipped: this CPU has no AVX-512 VNNI");
                    return;
                };
                for make_code in codes {
                    // Four codes apart from one another, each followed by other bytes.
                    let all: Vec<i8> = (0..dim * 8).map(make_code).collect();
                    let four: [&[i8]; 4] = std::array::from_fn(|k| &all[2 * k * dim..]);
                    let want = four.map(|code| portable(&q, &code[..dim]));
                    assert_eq!(split.dots4(four), want, "dim {dim}");
                    assert_eq!(split.dot(four[3]), want[3], "dim {dim}, one code");
                }
            }
        }
        assert!(SplitQuery::new(&vec![1i16; SPLIT_MAX_LEN + 1]).is_none());
        assert!(SplitQuery::new(&[]).is_none());
    }
}
